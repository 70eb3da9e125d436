// Train entries: the settings schema (which settings exist, which are
// groups, which are required), the order of evaluation (`data` and `batch`
// first so that `batch.FIELD` has a type, then the `let` bindings, then the
// other settings, so settings may appear in any order), defaults, and the
// body's outputs: the loss, then each metric.
#include "frontend/Sema.h"
#include "schema/Schedules.h"

#include <algorithm>
#include <set>

namespace modelc::sema {

namespace {
struct TrainSetting {
  const char *name;
  bool group;
};

constexpr TrainSetting kTrainSettings[] = {
    {"data", false},       {"batch", false},     {"loss", false},
    {"metrics", true},     {"optimizer", false}, {"schedule", false},
    {"grad_clip", false},  {"steps", false},     {"epochs", false},
    {"accumulate", false}, {"precision", false}, {"seed", false},
    {"shuffle", false},    {"eval", true},       {"checkpoint", true},
    {"log", true},         {"parallel", true},   {"grad_scaler", true},
    {"param_groups", true},
};

const TrainSetting *findTrainSetting(const std::string &name) {
  for (const TrainSetting &t : kTrainSettings)
    if (name == t.name)
      return &t;
  return nullptr;
}

const ast::Expr *settingValue(const ast::Stmt *s) {
  const auto *assign = s->as<ast::AssignStmt>();
  return assign ? assign->value.get() : nullptr;
}
} // namespace

/// The statements of a train entry, sorted: the settings in source order
/// (each checked against the schema and given once), and the bindings
/// (lets, asserts and rebindings of a name that an earlier let defines),
/// which run before the settings other than `data` and `batch`.
struct Sema::TrainStatements {
  std::map<std::string, const ast::Stmt *> given;
  std::vector<std::pair<std::string, const ast::Stmt *>> settings;
  std::vector<const ast::Stmt *> bindings;
};

void Sema::elaborateTrain(FunctionState &st, Entry &entry) {
  TrainStatements statements = sortTrainStatements(*st.entry);
  std::map<std::string, const ast::Stmt *> &given = statements.given;

  // `data` and `batch` first: `batch.FIELD` needs both.
  int data = -1;
  std::optional<int64_t> batch;
  if (given.count("data"))
    data = resolveDataRef(settingValue(given["data"]), "setting 'data'");
  if (given.count("batch"))
    batch = intSetting(settingValue(given["batch"]), "batch", 1);
  if (data >= 0 && batch)
    bindBatchFields(st, entry, data, *batch, given["batch"]->loc);

  for (const ast::Stmt *s : statements.bindings)
    if (!st.stopped)
      execStmt(*s);

  std::optional<int> loss;
  std::vector<std::pair<std::string, int>> metrics;
  loss = evalTrainSettings(st, statements, data, entry.settings, metrics);
  checkRequiredTrainSettings(*st.entry, entry, given);
  if (batch)
    entry.settings["batch"] = Attr(*batch);
  completeTrainSettings(*st.entry, entry, given);

  if (loss) {
    st.fn.results.push_back(*loss);
    entry.outputNames.push_back("loss");
    for (const auto &[name, id] : metrics) {
      st.fn.results.push_back(id);
      entry.outputNames.push_back(name);
    }
  }
}

Sema::TrainStatements Sema::sortTrainStatements(const EntryState &es) {
  std::vector<std::string> valid;
  for (const TrainSetting &t : kTrainSettings)
    valid.push_back(t.name);
  // Setting names are reserved, so `name = expr` is never ambiguous.
  TrainStatements out;
  std::set<std::string> letNames;
  for (const ast::StmtPtr &s : es.decl->body) {
    if (!s)
      continue;
    if (const auto *let = s->as<ast::LetStmt>()) {
      for (size_t i = 0; i < let->names.size(); ++i) {
        const std::string &n = let->names[i];
        if (findTrainSetting(n)) {
          SourceLoc at = i < let->nameLocs.size() && let->nameLocs[i].isValid()
                             ? let->nameLocs[i]
                             : let->loc;
          diag.error(at, "'" + n + "' is a setting of " + es.label +
                             "; a 'let' may not take a setting's name");
        } else {
          letNames.insert(n);
        }
      }
    }
    if (s->kind == ast::Stmt::Kind::Let || s->kind == ast::Stmt::Kind::Assert) {
      out.bindings.push_back(s.get());
      continue;
    }
    const auto *assign = s->as<ast::AssignStmt>();
    const auto *group = s->as<ast::GroupStmt>();
    if (!assign && !group) {
      rejectEntryStmt(*s, es.label,
                      "let bindings, rebindings, asserts and settings");
      continue;
    }
    const std::string &name = assign ? assign->name : group->name;
    const TrainSetting *spec = findTrainSetting(name);
    if (!spec && assign && letNames.count(name)) {
      out.bindings.push_back(s.get()); // a rebinding, in order with the lets
      continue;
    }
    if (!spec) {
      diag.error(s->loc, "unknown setting '" + name + "' in " + es.label +
                             didYouMean(name, valid) +
                             "; valid settings: " + joinNames(valid));
      continue;
    }
    if (spec->group && assign) {
      diag.error(s->loc, "'" + name + "' is a group of settings: write `" +
                             name + " { KEY = VALUE; ... }`");
      continue;
    }
    if (!spec->group && group) {
      diag.error(s->loc, "'" + name + "' is a single setting: write `" + name +
                             " = VALUE`");
      continue;
    }
    auto first = out.given.find(name);
    if (first == out.given.end() && (name == "steps" || name == "epochs"))
      first = out.given.find(name == "steps" ? "epochs" : "steps");
    if (first != out.given.end()) {
      diag.error(s->loc, first->first == name
                             ? "setting '" + name + "' is given twice"
                             : "give either 'steps' or 'epochs', not both");
      diag.note(first->second->loc, "'" + first->first + "' is given here");
      continue;
    }
    out.given[name] = s.get();
    out.settings.emplace_back(name, s.get());
  }
  return out;
}

std::optional<int>
Sema::evalTrainSettings(const FunctionState &st,
                        const TrainStatements &statements, int data,
                        AttrDict &out,
                        std::vector<std::pair<std::string, int>> &metrics) {
  std::optional<int> loss;
  const ast::Stmt *groups = nullptr;
  for (const auto &[name, s] : statements.settings) {
    const ast::Expr *value = settingValue(s);
    if (name == "data" || name == "batch" || st.stopped)
      continue; // after a failed assert only `data` and `batch` were used
    if (name == "loss")
      loss = evalLoss(value);
    else if (name == "metrics")
      evalMetrics(*s->as<ast::GroupStmt>(), metrics);
    else if (name == "optimizer" || name == "schedule") {
      std::optional<AttrDict> d =
          name == "optimizer" ? evalOptimizer(value) : evalSchedule(value);
      if (d)
        out[name] = Attr(std::move(*d));
    } else if (name == "grad_clip") {
      if (auto v = positiveFloatSetting(value, name))
        out[name] = Attr(*v);
    } else if (name == "steps" || name == "epochs" || name == "accumulate") {
      if (auto v = intSetting(value, name, 1))
        out[name] = Attr(*v);
    } else if (name == "seed") {
      if (auto v = intSetting(value, name, 0))
        out[name] = Attr(*v);
    } else if (name == "shuffle") {
      if (auto v = evalBool(value, "setting 'shuffle'"))
        out[name] = Attr(*v);
    } else if (name == "precision") {
      if (auto v = evalPrecision(value))
        out[name] = Attr(*v);
    } else if (name == "param_groups") {
      groups = s; // after the optimizer, wherever it is written
    } else {
      int index = -1;
      if (auto d = evalSettingsGroup(*s->as<ast::GroupStmt>(), index))
        out[name] = Attr(std::move(*d));
      if (name == "eval" && index >= 0 && data >= 0)
        checkEvalData(data, index, s->loc);
    }
  }
  if (groups && !st.stopped) {
    auto optimizer = out.find("optimizer");
    const AttrDict *settings =
        optimizer == out.end()
            ? nullptr
            : std::get_if<AttrDict>(&optimizer->second.value);
    if (auto d = evalParamGroups(*groups->as<ast::GroupStmt>(), settings))
      out["param_groups"] = Attr(std::move(*d));
  }
  return loss;
}

void Sema::checkRequiredTrainSettings(
    const EntryState &es, const Entry &entry,
    const std::map<std::string, const ast::Stmt *> &given) {
  std::vector<std::string> missing;
  for (const char *required : {"data", "batch", "loss", "optimizer"})
    if (!given.count(required))
      missing.push_back(std::string("'") + required + "'");
  if (!given.count("steps") && !given.count("epochs"))
    missing.push_back("'steps' or 'epochs'");
  if (!missing.empty())
    diag.error(entry.loc, es.label + " is missing the required setting" +
                              (missing.size() == 1 ? " " : "s ") +
                              joinNames(missing));
}

void Sema::completeTrainSettings(
    const EntryState &es, Entry &entry,
    std::map<std::string, const ast::Stmt *> &given) {
  AttrDict &out = entry.settings;
  // Defaults (docs/language.md).
  AttrDict schedule{{"kind", Attr("constant")},
                    {"warmup", Attr(int64_t(0))},
                    {"min_lr", Attr(0.0)},
                    {"every", Attr(int64_t(0))},
                    {"gamma", Attr(1.0)}};
  const std::pair<const char *, Attr> defaults[] = {
      {"accumulate", Attr(int64_t(1))},
      {"precision", Attr("f32")},
      {"seed", Attr(int64_t(0))},
      {"shuffle", Attr(true)},
      {"schedule", Attr(schedule)},
      {"log", Attr(AttrDict{{"every", Attr(int64_t(10))}})},
      {"parallel", Attr(AttrDict{{"data", Attr("gpus")},
                                 {"zero", Attr(int64_t(0))},
                                 {"bucket_mb", Attr(25.0)}})},
  };
  for (const auto &[key, value] : defaults)
    if (!out.count(key))
      out[key] = value;
  if (!options.precision.empty())
    out["precision"] = Attr(options.precision);
  // f16 trains with dynamic loss scaling (torch.amp.GradScaler): its
  // settings, defaults filled in, exist exactly when the precision is f16.
  // bf16 and f32 need none, so a grad_scaler there is an error in the
  // source, and a warning when --precision overrode the source's f16.
  if (std::get<std::string>(out["precision"].value) == "f16") {
    if (!out.count("grad_scaler")) {
      int unused = -1;
      ast::GroupStmt empty(entry.loc, "grad_scaler");
      if (auto d = evalSettingsGroup(empty, unused))
        out["grad_scaler"] = Attr(std::move(*d));
    }
  } else if (given.count("grad_scaler")) {
    SourceLoc loc = given["grad_scaler"]->loc;
    std::string precision = std::get<std::string>(out["precision"].value);
    std::string why = "'grad_scaler' applies to precision f16 only; " +
                      precision + " needs no loss scaling";
    if (options.precision.empty())
      diag.error(loc, es.label + ": " + why);
    else
      diag.warning(loc, es.label + ": --precision " + precision +
                            " ignores this block: " + why);
    out.erase("grad_scaler");
  }

  // ZeRO-1 shards the optimizer state (docs/runtime/zero.md); stages 2
  // and 3 (gradients, parameters) are not built: refused, not ignored.
  const auto &parallel = std::get<AttrDict>(out["parallel"].value);
  int64_t zero = std::get<int64_t>(parallel.at("zero").value);
  if (zero != 0 && zero != 1)
    diag.error(given.count("parallel") ? given["parallel"]->loc : entry.loc,
               es.label + ": 'parallel.zero = " + std::to_string(zero) +
                   "': only ZeRO-1 (zero = 1, sharded optimizer state) is "
                   "supported; stages 2 and 3 (sharded gradients and "
                   "parameters) are not; use zero = 0 or 1");

  // A warmup as long as the whole run leaves no room for the decay.
  auto steps = out.find("steps");
  const auto &sched = std::get<AttrDict>(out["schedule"].value);
  int64_t warmup = std::get<int64_t>(sched.at("warmup").value);
  std::string kind = std::get<std::string>(sched.at("kind").value);
  if (steps != out.end() && schedules::hasWarmup(kind) &&
      warmup >= std::get<int64_t>(steps->second.value))
    diag.error(given["schedule"]->loc,
               "the schedule's warmup (" + std::to_string(warmup) +
                   " steps) must be shorter than the run (" +
                   std::to_string(std::get<int64_t>(steps->second.value)) +
                   " steps)");
}

} // namespace modelc::sema
