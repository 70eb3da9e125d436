// The values of train settings (spec §8): optimizers and schedules with
// torch.optim's arguments and checks, precision, the loss and metrics, and
// the settings groups eval/checkpoint/log/parallel/grad_scaler, each normalised into an
// AttrDict with its defaults filled in (docs/language.md lists them).
#include "frontend/Sema.h"
#include "schema/Optimizers.h"
#include "schema/Schedules.h"

#include <algorithm>
#include <cmath>

namespace modelc::sema {

namespace {
CValue floats(std::vector<double> values) {
  std::vector<CValue> out;
  for (double v : values)
    out.push_back(CValue::ofFloat(v));
  return CValue::ofList(std::move(out));
}

/// The name of a call (`adamw(...)`) or of a bare name (`constant`).
const ast::NameExpr *calleeName(const ast::Expr *e) {
  if (!e)
    return nullptr;
  if (const auto *call = e->as<ast::CallExpr>())
    return call->callee ? call->callee->as<ast::NameExpr>() : nullptr;
  return e->as<ast::NameExpr>();
}

enum class KeyKind { Int, Float, String, Data, EveryOrEpoch, Gpus };
struct GroupKey {
  const char *name;
  KeyKind kind;
  int64_t min;
  bool required;
  Attr dflt;
  /// A Float key's value lies strictly between these; `range` says so.
  double above = -HUGE_VAL, below = HUGE_VAL;
  const char *range = "";
};
struct GroupSpec {
  const char *name;
  std::vector<GroupKey> keys;
};

const std::vector<GroupSpec> &groupSpecs() {
  static const std::vector<GroupSpec> specs = {
      {"eval",
       {{"data", KeyKind::Data, 0, true, Attr("")},
        {"every", KeyKind::EveryOrEpoch, 1, false, Attr(int64_t(0))},
        {"steps", KeyKind::Int, 1, false, Attr(int64_t(0))}}},
      {"checkpoint",
       {{"every", KeyKind::Int, 1, true, Attr(int64_t(0))},
        {"dir", KeyKind::String, 0, false, Attr("checkpoints")},
        {"keep", KeyKind::Int, 0, false, Attr(int64_t(0))}}},
      {"log", {{"every", KeyKind::Int, 1, false, Attr(int64_t(10))}}},
      // spec §8; SemaTrain refuses a zero other than 0 or 1.
      {"parallel",
       {{"data", KeyKind::Gpus, 0, false, Attr("gpus")},
        {"zero", KeyKind::Int, 0, false, Attr(int64_t(0))},
        {"bucket_mb", KeyKind::Float, 0, false, Attr(25.0), 0, HUGE_VAL,
         "positive"}}},
      // torch.amp.GradScaler's arguments, defaults and checks.
      {"grad_scaler",
       {{"init_scale", KeyKind::Float, 0, false, Attr(65536.0), 0, HUGE_VAL,
         "positive"},
        {"growth_factor", KeyKind::Float, 0, false, Attr(2.0), 1, HUGE_VAL,
         "greater than 1"},
        {"backoff_factor", KeyKind::Float, 0, false, Attr(0.5), 0, 1,
         "between 0 and 1"},
        {"growth_interval", KeyKind::Int, 1, false, Attr(int64_t(2000))}}},
  };
  return specs;
}
} // namespace

std::optional<std::string> Sema::bareWord(const ast::Expr *e) {
  const auto *name = e ? e->as<ast::NameExpr>() : nullptr;
  if (!name || lookup(name->name) || curModule().consts.count(name->name))
    return std::nullopt;
  return name->name;
}

std::optional<int64_t> Sema::intSetting(const ast::Expr *e,
                                        const std::string &name, int64_t min) {
  std::optional<int64_t> v = evalInt(e, "setting '" + name + "'");
  if (v && *v < min) {
    diag.error(e->loc, "setting '" + name + "' must be at least " +
                           std::to_string(min) + ", got " + std::to_string(*v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> Sema::positiveFloatSetting(const ast::Expr *e,
                                                 const std::string &name) {
  std::optional<double> v = evalFloat(e, "setting '" + name + "'");
  if (v && !(*v > 0)) {
    diag.error(e->loc, "setting '" + name + "' must be positive, got " +
                           formatFloat(*v));
    return std::nullopt;
  }
  return v;
}

namespace {

/// The arguments of `group(...)`, all optional (None when absent): the
/// selectors `match` and `max_rank`, then the optimizer's numbers
/// (Optimizers.def), `betas` standing for beta1 and beta2.
std::vector<ConstParam> groupParams() {
  using K = CValue::Kind;
  std::vector<ConstParam> params = {
      {"match", K::List, CValue(), /*strings=*/true},
      {"max_rank", K::Int, CValue()}};
  for (const optimizers::HyperDef &hyper : optimizers::kHypers)
    if (std::string_view(hyper.key) != "beta1" &&
        std::string_view(hyper.key) != "beta2")
      params.push_back({hyper.key, K::Float, CValue()});
  params.push_back({"betas", K::List, CValue()});
  return params;
}

/// An int or float constant as a double; nullopt for anything else.
std::optional<double> numberOf(const CValue &v) {
  if (v.kind == CValue::Kind::Float)
    return v.f;
  if (v.kind == CValue::Kind::Int)
    return double(v.i);
  return std::nullopt;
}

/// The optimizer a train entry's evaluated `optimizer` setting names, or
/// null when there is none.
const optimizers::KindDef *optimizerKind(const AttrDict *optimizer) {
  if (!optimizer)
    return nullptr;
  auto it = optimizer->find("kind");
  const auto *text = it == optimizer->end()
                         ? nullptr
                         : std::get_if<std::string>(&it->second.value);
  return text ? optimizers::findKind(*text) : nullptr;
}

/// The settings a group's bound `args` give (from index 2 of
/// groupParams), as the optimizer's hypers (betas as beta1 and beta2),
/// into `settings`; the first problem, or "".
std::string groupSettings(const std::vector<CValue> &args,
                          const std::vector<ConstParam> &params,
                          const optimizers::KindDef *kind,
                          const AttrDict *optimizer, AttrDict &settings) {
  namespace opt = optimizers;
  auto takes = [&](const std::string &key) {
    if (!kind)
      return true;
    for (const opt::ArgDef &arg : kind->args)
      if (arg.key && key == arg.key)
        return true;
    return false;
  };
  for (size_t i = 2; i < params.size(); ++i) {
    const CValue &v = args[i];
    if (v.kind == CValue::Kind::None)
      continue;
    const std::string key = params[i].name;
    if (!takes(key))
      return "'" + key + "' is not a setting of " + kind->name + "(...)";
    if (key == "betas") {
      std::vector<double> b;
      for (const CValue &x : v.list)
        if (std::optional<double> n = numberOf(x))
          b.push_back(*n);
      if (b.size() != 2 || v.list.size() != 2 ||
          !opt::findHyper("beta1")->allows(b[0]) ||
          !opt::findHyper("beta2")->allows(b[1]))
        return "'betas' must be two numbers in [0, 1), got " + literalText(v);
      settings["beta1"] = Attr(b[0]);
      settings["beta2"] = Attr(b[1]);
      continue;
    }
    std::optional<double> n = numberOf(v);
    const opt::HyperDef *hyper = opt::findHyper(key);
    if (!n || !hyper->allows(*n))
      return "'" + key + "' must be " + hyper->expected + ", got " +
             literalText(v);
    settings[key] = Attr(*n);
  }
  if (settings.empty())
    return "sets nothing: give one of the optimizer's settings "
           "(weight_decay, lr, ...)";
  if (kind && std::string_view(kind->name) == "sgd" &&
      settings.count("momentum") &&
      std::get<double>(settings["momentum"].value) <= 0) {
    auto nesterov = optimizer->find("nesterov");
    if (nesterov != optimizer->end() && std::get<bool>(nesterov->second.value))
      return "momentum must be > 0 with nesterov = true (as "
             "torch.optim.SGD)";
  }
  return "";
}

} // namespace

std::optional<AttrDict> Sema::evalParamGroups(const ast::GroupStmt &g,
                                              const AttrDict *optimizer) {
  const std::string sig = "group(match = [patterns], max_rank = r, and the "
                          "optimizer's settings: weight_decay = w, lr = l, "
                          "...)";
  const std::vector<ConstParam> params = groupParams();
  const optimizers::KindDef *kind = optimizerKind(optimizer);
  AttrDict out;
  bool ok = true;
  for (const ast::StmtPtr &s : g.body) {
    const auto *assign = s->as<ast::AssignStmt>();
    if (!assign)
      continue; // the parser allows assignments only
    const ast::Expr *value = assign->value.get();
    if (out.count(assign->name)) {
      diag.error(s->loc, "parameter group '" + assign->name +
                             "' is given twice");
      ok = false;
      continue;
    }
    const ast::NameExpr *callee = calleeName(value);
    if (!callee || callee->name != "group") {
      diag.error(value ? value->loc : s->loc,
                 "a parameter group is " + sig + ", got " + exprText(value));
      ok = false;
      continue;
    }
    std::optional<std::vector<CValue>> args =
        bindConstCall(*value, "group", params);
    if (!args) {
      ok = false;
      continue;
    }
    std::vector<std::string> patterns;
    for (const CValue &p : (*args)[0].list)
      patterns.push_back(p.s);
    const CValue &rank = (*args)[1];
    int64_t maxRank = rank.kind == CValue::Kind::Int ? rank.i : INT64_MAX;
    AttrDict group;
    std::string problem;
    if (patterns.empty() && rank.kind != CValue::Kind::Int)
      problem = "needs 'match' or 'max_rank' to select its parameters";
    else if (std::find(patterns.begin(), patterns.end(), "") != patterns.end())
      problem = "has an empty pattern in 'match'";
    else if (maxRank < 0)
      problem = "'max_rank' must be at least 0";
    else
      problem = groupSettings(*args, params, kind, optimizer, group);
    if (!problem.empty()) {
      diag.error(value->loc, "group '" + assign->name + "': " + problem);
      ok = false;
      continue;
    }
    if (!patterns.empty())
      group["match"] = Attr(std::move(patterns));
    if (maxRank != INT64_MAX)
      group["max_rank"] = Attr(maxRank);
    out[assign->name] = Attr(std::move(group));
  }
  if (!ok)
    return std::nullopt;
  return out;
}

std::optional<AttrDict> Sema::evalOptimizer(const ast::Expr *e) {
  namespace opt = optimizers;
  const ast::NameExpr *name = calleeName(e);
  std::vector<std::string> names, calls;
  for (const opt::KindDef &k : opt::kKinds) {
    names.push_back(k.name);
    calls.push_back(std::string(k.name) + "(lr, ...)");
  }
  const std::string all = joinWithAnd(calls);
  if (!name) {
    if (e)
      diag.error(e->loc, "setting 'optimizer' must be one of " + all +
                             ", got " + exprText(e));
    return std::nullopt;
  }
  const std::string &kind = name->name;
  const opt::KindDef *def = opt::findKind(kind);
  if (!def) {
    diag.error(name->loc, "unknown optimizer '" + kind + "'" +
                              didYouMean(kind, names) + "; optimizers are " +
                              all);
    return std::nullopt;
  }
  // torch.optim's arguments and defaults, from schema/Optimizers.def.
  using K = CValue::Kind;
  std::vector<ConstParam> params;
  for (const opt::ArgDef &arg : def->args) {
    if (!arg.key)
      break;
    std::optional<CValue> value;
    const std::string key = arg.key;
    if (key == "betas")
      value = floats({opt::findHyper("beta1")->defaultValue,
                      opt::findHyper("beta2")->defaultValue});
    else if (opt::isFlag(key))
      value = CValue::ofBool(arg.defaultValue != 0);
    else if (!arg.isRequired())
      value = CValue::ofFloat(arg.defaultValue);
    params.push_back({arg.key,
                      key == "betas"       ? K::List
                      : opt::isFlag(key)   ? K::Bool
                                           : K::Float,
                      value});
  }
  std::optional<std::vector<CValue>> args = bindConstCall(*e, kind, params);
  if (!args)
    return std::nullopt;
  // Every optimizer has lr, momentum, nesterov, betas, eps and
  // weight_decay in its dictionary (0, false, [0.9, 0.999], 1e-8 where it
  // has none); the others only their own keys.
  AttrDict d;
  d["kind"] = Attr(kind);
  d["momentum"] = Attr(opt::findHyper("momentum")->defaultValue);
  d["nesterov"] = Attr(false);
  d["betas"] = Attr(std::vector<double>{opt::findHyper("beta1")->defaultValue,
                                        opt::findHyper("beta2")->defaultValue});
  d["eps"] = Attr(opt::findHyper("eps")->defaultValue);
  std::string problem;
  auto check = [&](const char *key, double v, const std::string &text) {
    const opt::HyperDef *hyper = opt::findHyper(key);
    if (problem.empty() && !hyper->allows(v))
      problem = std::string(key) + " must be " + hyper->expected + ", got " +
                text;
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string key = params[i].name;
    const CValue &v = (*args)[i];
    if (params[i].kind == K::Bool) {
      d[key] = Attr(v.b);
    } else if (params[i].kind == K::List) {
      std::vector<double> b;
      for (const CValue &x : v.list)
        b.push_back(x.f);
      d[key] = Attr(b);
      if (b.size() != 2 && problem.empty())
        problem = "betas must be two numbers in [0, 1), got " + literalText(v);
      else if (b.size() == 2 && problem.empty() &&
               !(opt::findHyper("beta1")->allows(b[0]) &&
                 opt::findHyper("beta2")->allows(b[1])))
        problem = "betas must be two numbers in [0, 1), got " + literalText(v);
    } else {
      d[key] = Attr(v.f);
      check(params[i].name, v.f, literalText(v));
    }
  }
  if (problem.empty() && kind == "sgd" && std::get<bool>(d["nesterov"].value) &&
      std::get<double>(d["momentum"].value) <= 0)
    problem = "nesterov = true needs momentum > 0 (as torch.optim.SGD)";
  if (!problem.empty()) {
    diag.error(e->loc, "invalid '" + kind + "': " + problem);
    return std::nullopt;
  }
  return d;
}

std::optional<AttrDict> Sema::evalSchedule(const ast::Expr *e) {
  const ast::NameExpr *name = calleeName(e);
  std::vector<std::string> names, calls;
  for (const schedules::ScheduleDef &s : schedules::kSchedules) {
    names.push_back(s.name);
    calls.push_back(std::string(s.name) + "(" + s.signature + ")");
  }
  const std::string all = joinWithAnd(calls);
  if (!name) {
    if (e)
      diag.error(e->loc, std::string("setting 'schedule' must be one of ") +
                             all + ", got " + exprText(e));
    return std::nullopt;
  }
  const std::string &kind = name->name;
  std::vector<ConstParam> params;
  if (kind == "warmup_cosine")
    params = {{"warmup", CValue::Kind::Int, std::nullopt},
              {"min_lr", CValue::Kind::Float, CValue::ofFloat(0)}};
  else if (kind == "linear")
    params = {{"warmup", CValue::Kind::Int, std::nullopt}};
  else if (kind == "step_lr")
    params = {{"every", CValue::Kind::Int, std::nullopt},
              {"gamma", CValue::Kind::Float, std::nullopt}};
  else if (!schedules::find(kind)) {
    diag.error(name->loc, "unknown schedule '" + kind + "'" +
                              didYouMean(kind, names) + "; schedules are " +
                              all);
    return std::nullopt;
  }
  std::optional<std::vector<CValue>> args = bindConstCall(*e, kind, params);
  if (!args)
    return std::nullopt;
  AttrDict d;
  d["kind"] = Attr(kind);
  d["warmup"] = Attr(int64_t(0));
  d["min_lr"] = Attr(0.0);
  d["every"] = Attr(int64_t(0));
  d["gamma"] = Attr(1.0);
  std::string problem;
  if (schedules::hasWarmup(kind)) {
    d["warmup"] = Attr((*args)[0].i);
    if ((*args)[0].i < 0)
      problem = "warmup must not be negative";
    if (kind == "warmup_cosine") {
      d["min_lr"] = Attr((*args)[1].f);
      if ((*args)[1].f < 0)
        problem = "min_lr must not be negative";
    }
  } else if (kind == "step_lr") {
    d["every"] = Attr((*args)[0].i);
    d["gamma"] = Attr((*args)[1].f);
    if ((*args)[0].i < 1)
      problem = "every must be at least 1";
    else if (!((*args)[1].f > 0))
      problem = "gamma must be positive";
  }
  if (!problem.empty()) {
    diag.error(e->loc, "invalid '" + kind + "': " + problem);
    return std::nullopt;
  }
  return d;
}

std::optional<std::string> Sema::evalPrecision(const ast::Expr *e) {
  std::optional<std::string> word = bareWord(e);
  if (!word) {
    word = evalString(e, "setting 'precision'");
    if (!word)
      return std::nullopt;
  }
  if (*word == "f32" || *word == "bf16" || *word == "f16")
    return word;
  diag.error(e->loc, "setting 'precision' must be f32, bf16 or f16, got '" +
                         *word + "'");
  return std::nullopt;
}

std::optional<AttrDict> Sema::evalSettingsGroup(const ast::GroupStmt &g,
                                                int &dataIndex) {
  const GroupSpec *spec = nullptr;
  for (const GroupSpec &s : groupSpecs())
    if (g.name == s.name)
      spec = &s;
  if (!spec)
    return std::nullopt;
  std::vector<std::string> valid;
  for (const GroupKey &k : spec->keys)
    valid.push_back(k.name);
  std::map<std::string, SourceLoc> seen;
  AttrDict out;
  bool ok = true;
  for (const ast::StmtPtr &s : g.body) {
    const auto *assign = s ? s->as<ast::AssignStmt>() : nullptr;
    if (!assign) {
      if (s)
        diag.error(s->loc, "only `KEY = VALUE` settings are allowed in '" +
                               g.name + " { }'");
      ok = false;
      continue;
    }
    std::string full = g.name + "." + assign->name;
    auto key =
        std::find_if(spec->keys.begin(), spec->keys.end(),
                     [&](const GroupKey &k) { return assign->name == k.name; });
    if (key == spec->keys.end()) {
      diag.error(s->loc, "unknown setting '" + assign->name + "' in '" +
                             g.name + " { }'" +
                             didYouMean(assign->name, valid) +
                             "; valid settings: " + joinNames(valid));
      ok = false;
      continue;
    }
    auto [it, fresh] = seen.emplace(assign->name, s->loc);
    if (!fresh) {
      diag.error(s->loc, "setting '" + full + "' is given twice");
      diag.note(it->second, "first given here");
      ok = false;
      continue;
    }
    const ast::Expr *value = assign->value.get();
    std::optional<Attr> attr;
    switch (key->kind) {
    case KeyKind::Int:
      if (auto v = intSetting(value, full, key->min))
        attr = Attr(*v);
      break;
    case KeyKind::Float:
      if (auto v = evalFloat(value, "setting '" + full + "'")) {
        if (*v > key->above && *v < key->below)
          attr = Attr(*v);
        else
          diag.error(value->loc, "setting '" + full + "' must be " +
                                     key->range + ", got " + formatFloat(*v));
      }
      break;
    case KeyKind::String:
      if (auto v = evalString(value, "setting '" + full + "'"))
        attr = Attr(*v);
      break;
    case KeyKind::Data:
      dataIndex = resolveDataRef(value, "setting '" + full + "'");
      if (dataIndex >= 0)
        attr = Attr(program.dataSets[dataIndex].name);
      break;
    case KeyKind::EveryOrEpoch:
      if (bareWord(value) == std::optional<std::string>("epoch"))
        attr = Attr(int64_t(0));
      else if (auto v = intSetting(value, full, key->min))
        attr = Attr(*v);
      break;
    case KeyKind::Gpus:
      if (bareWord(value) == std::optional<std::string>("gpus"))
        attr = Attr("gpus");
      else if (value)
        diag.error(value->loc, "setting '" + full +
                                   "' must be `gpus` (data parallel over "
                                   "every --gpus device), got " +
                                   exprText(value));
      break;
    }
    if (!attr)
      ok = false;
    else
      out[assign->name] = *attr;
  }
  for (const GroupKey &k : spec->keys) {
    if (out.count(k.name) || seen.count(k.name))
      continue;
    if (k.required) {
      diag.error(g.loc, "'" + g.name + " { }' needs the setting '" +
                            std::string(k.name) + "'");
      ok = false;
    }
    out[k.name] = k.dflt;
  }
  if (!ok)
    return std::nullopt;
  return out;
}

void Sema::evalMetrics(const ast::GroupStmt &g,
                       std::vector<std::pair<std::string, int>> &metrics) {
  std::map<std::string, SourceLoc> seen;
  for (const ast::StmtPtr &s : g.body) {
    const auto *assign = s ? s->as<ast::AssignStmt>() : nullptr;
    if (!assign) {
      if (s)
        diag.error(s->loc, "only `NAME = EXPR` metrics are allowed in "
                           "'metrics { }'");
      continue;
    }
    if (assign->name == "loss") {
      diag.error(s->loc, "a metric cannot be called 'loss'; the loss is "
                         "logged already");
      continue;
    }
    auto [it, fresh] = seen.emplace(assign->name, s->loc);
    if (!fresh) {
      diag.error(s->loc, "metric '" + assign->name + "' is given twice");
      diag.note(it->second, "first given here");
      continue;
    }
    cur().inMetrics = true;
    CValue v = eval(assign->value.get());
    cur().inMetrics = false;
    if (v.kind == CValue::Kind::None)
      continue;
    const TensorType *type = v.isTensor() ? &cur().builder.typeOf(v) : nullptr;
    if (!type || !type->shape.empty()) {
      diag.error(assign->value->loc,
                 "metric '" + assign->name + "' must be a scalar tensor, got " +
                     describe(v) +
                     (type ? "; reduce it, e.g. with mean(...)" : ""));
      continue;
    }
    int id = v.tensor;
    if (type->dtype != DType::F32) // metrics are logged as f32
      id = cur().builder.emit1("cast", {id}, TensorType{DType::F32, {}}, {},
                               assign->value->loc);
    metrics.emplace_back(assign->name, id);
  }
}

std::optional<int> Sema::evalLoss(const ast::Expr *e) {
  CValue v = eval(e);
  if (v.kind == CValue::Kind::None)
    return std::nullopt;
  if (v.isTensor() && cur().builder.typeOf(v) == TensorType{DType::F32, {}})
    return v.tensor;
  bool reducible = v.isTensor() && !cur().builder.typeOf(v).shape.empty();
  diag.error(e->loc, "setting 'loss' must be a scalar f32 tensor, got " +
                         describe(v) +
                         (reducible ? "; reduce it, e.g. with mean(...)" : ""));
  return std::nullopt;
}

} // namespace modelc::sema
