// Parameters (spec §6): `param` statements and their initialisers, the slots
// through which a function receives the parameters it and its callees use
// (paths relative to the function's scope, prefixed by `as` at each call),
// ties with `&path`, and their resolution to full names at the entry.
#include "frontend/Sema.h"

#include <cmath>

namespace modelc::sema {

namespace {
struct InitializerSpec {
  const char *name;
  std::vector<ConstParam> params;
};

const std::vector<InitializerSpec> &initializerSpecs() {
  static const std::vector<InitializerSpec> specs = {
      {"zeros", {}},
      {"ones", {}},
      {"full", {{"value", CValue::Kind::Float, std::nullopt}}},
      {"normal",
       {{"mean", CValue::Kind::Float, CValue::ofFloat(0.0)},
        {"std", CValue::Kind::Float, CValue::ofFloat(1.0)}}},
      {"uniform",
       {{"lo", CValue::Kind::Float, CValue::ofFloat(0.0)},
        {"hi", CValue::Kind::Float, CValue::ofFloat(1.0)}}},
      {"kaiming_uniform", {{"fan_in", CValue::Kind::Float, std::nullopt}}},
      {"xavier_uniform", {}},
      {"truncated_normal",
       {{"std", CValue::Kind::Float, CValue::ofFloat(1.0)}}},
  };
  return specs;
}
} // namespace

std::optional<Initializer> Sema::evalInitializer(const ast::Expr *init,
                                                 const TensorType &type) {
  if (!init)
    return std::nullopt; // the parser reported it
  const auto *call = init->as<ast::CallExpr>();
  const ast::Expr *callee = call ? call->callee.get() : init;
  const auto *name = callee ? callee->as<ast::NameExpr>() : nullptr;
  std::vector<std::string> names;
  std::string all;
  for (const InitializerSpec &s : initializerSpecs()) {
    names.push_back(s.name);
    all += std::string(all.empty() ? "" : ", ") + s.name + "(";
    for (size_t i = 0; i < s.params.size(); ++i)
      all += std::string(i ? ", " : "") + s.params[i].name;
    all += ")";
  }
  if (!name) {
    diag.error(init->loc, "a parameter needs an initialiser call such as "
                          "zeros() or normal(0.0, 0.02), got " +
                              exprText(init));
    return std::nullopt;
  }
  const InitializerSpec *spec = nullptr;
  for (const InitializerSpec &s : initializerSpecs())
    if (name->name == s.name)
      spec = &s;
  if (!spec) {
    diag.error(name->loc, "unknown initialiser '" + name->name + "'" +
                              didYouMean(name->name, names) +
                              "; initialisers are " + all);
    return std::nullopt;
  }
  std::optional<std::vector<CValue>> args =
      bindConstCall(*init, spec->name, spec->params);
  if (!args)
    return std::nullopt;
  Initializer result;
  result.kind = spec->name;
  for (const CValue &a : *args) {
    if (!std::isfinite(a.f)) {
      diag.error(init->loc, "the arguments of '" + result.kind +
                                "' must be finite, got " + formatFloat(a.f));
      return std::nullopt;
    }
    result.args.push_back(a.f);
  }
  std::string problem;
  if ((result.kind == "normal" && result.args[1] < 0) ||
      (result.kind == "truncated_normal" && result.args[0] < 0))
    problem = "std must not be negative";
  else if (result.kind == "uniform" && result.args[0] > result.args[1])
    problem = "lo must not exceed hi";
  else if (result.kind == "kaiming_uniform" && result.args[0] <= 0)
    problem = "fan_in must be positive";
  else if (result.kind == "xavier_uniform" && type.shape.size() < 2)
    problem = "its fans come from the shape (as PyTorch computes them), "
              "which needs at least 2 dimensions; the parameter is " +
              type.str();
  if (!problem.empty()) {
    diag.error(init->loc,
               "invalid " + initializerText(result) + ": " + problem);
    return std::nullopt;
  }
  return result;
}

void Sema::execParam(const ast::ParamStmt &s) {
  SourceLoc nameLoc = s.nameLoc.isValid() ? s.nameLoc : s.loc;
  // `param weight_ih_l{i}: ...` in a `for` loop: a name per iteration.
  std::string name = s.name;
  if (s.interpolated) {
    std::optional<std::string> spelled = interpolatedName(
        *s.interpolated->as<ast::InterpolatedNameExpr>());
    if (!spelled)
      return;
    name = *spelled;
  }
  std::string what =
      std::string(s.buffer ? "buffer '" : "parameter '") + name + "'";
  std::optional<TensorType> type = evalTensorType(s.type, what);
  // A buffer may count (num_batches_tracked is i64), from zeros, ones or
  // full: an integer never comes from a random initialiser.
  bool integerBuffer = s.buffer && type &&
                       (type->dtype == DType::I64 || type->dtype == DType::I32);
  if (integerBuffer) {
    const auto *call = s.init ? s.init->as<ast::CallExpr>() : nullptr;
    const auto *callee =
        call && call->callee ? call->callee->as<ast::NameExpr>() : nullptr;
    if (callee && callee->name != "zeros" && callee->name != "ones" &&
        callee->name != "full") {
      diag.error(s.init->loc, what + " holds integers, so its initialiser is "
                                     "zeros(), ones() or full(value), not " +
                                     callee->name + "(...)");
      type.reset();
    }
  }
  // The runtime initialises, updates and saves parameters in f32 or f64;
  // 16-bit compute is the entry's `precision`, which keeps f32 masters.
  if (type && !integerBuffer && type->dtype != DType::F32 &&
      type->dtype != DType::F64) {
    std::string hint;
    if (s.buffer)
      hint = " (or i64 or i32 from a constant initialiser)";
    else if (isFloat(type->dtype))
      hint = "; parameters keep f32 master copies: `precision = " +
             std::string(dtypeName(type->dtype)) +
             "` in a train entry computes in 16 bits";
    diag.error(s.type.loc,
               what + " must be f32 or f64, got " + type->str() + hint);
    type.reset();
  }
  std::optional<Initializer> init;
  if (type)
    init = evalInitializer(s.init.get(), *type);
  if (!define(name, CValue(), nameLoc, BindingKind::Param) || !init)
    return;
  int value = addCreatedSlot(cur(), name, *type, *init, s.buffer, s.loc, {});
  lookupMutable(name)->value = CValue::ofTensor(value);
}

CValue Sema::evalParamRef(const ast::ParamRefExpr &e) {
  std::optional<std::string> path = evalPath(e.path);
  if (!path)
    return CValue();
  FunctionState &st = cur();
  if (st.entry) {
    auto it = st.entry->created.find(*path);
    if (it != st.entry->created.end())
      return CValue::ofTensor(paramRef(*path, it->second.type, e.loc));
  } else {
    auto it = st.createdSlots.find(*path);
    if (it != st.createdSlots.end())
      return CValue::ofTensor(st.fn.params[it->second].value);
  }
  std::string full = joinPath(st.fullPrefix, *path);
  if (std::optional<TensorType> type = findCreatedParam(full))
    return CValue::ofTensor(addTiedSlot(st, *path, *type, e.loc, {}));

  // Not found: suggest among the full names created so far.
  std::vector<std::string> known;
  for (const FunctionState *f : frames) {
    if (f->entry)
      for (const auto &p : f->entry->created)
        known.push_back(p.first);
    else
      for (const auto &p : f->createdSlots)
        known.push_back(joinPath(f->fullPrefix, p.first));
  }
  std::string where = frames.front()->entry
                          ? " in " + frames.front()->entry->label
                          : std::string();
  diag.error(
      e.loc,
      "'&" + *path +
          "' does not name a parameter created before this "
          "point" +
          where +
          (full != *path ? " (its full name would be '" + full + "')" : "") +
          didYouMean(full, known));
  return CValue();
}

std::optional<TensorType> Sema::findCreatedParam(const std::string &full) {
  for (size_t k = frames.size(); k-- > 0;) {
    const FunctionState &f = *frames[k];
    if (f.entry) {
      auto it = f.entry->created.find(full);
      if (it != f.entry->created.end())
        return it->second.type;
      continue;
    }
    const std::string &prefix = f.fullPrefix;
    std::string rel;
    if (prefix.empty())
      rel = full;
    else if (full.size() > prefix.size() + 1 &&
             full.compare(0, prefix.size(), prefix) == 0 &&
             full[prefix.size()] == '.')
      rel = full.substr(prefix.size() + 1);
    else
      continue;
    auto it = f.createdSlots.find(rel);
    if (it != f.createdSlots.end())
      return f.fn.params[it->second].type;
  }
  return std::nullopt;
}

std::vector<int> Sema::passCalleeSlots(int calleeIndex,
                                       const std::string &scope,
                                       const std::string &calleeName,
                                       SourceLoc callSite) {
  std::vector<ParamSlot> slots = program.functions[calleeIndex].params;
  const std::vector<SlotOrigin> &origins =
      functionInfo[calleeIndex].slotOrigins;
  std::vector<int> values(slots.size(), -1);
  // One duplicate per call is enough: the callee's other parameters would
  // all collide the same way.
  duplicatesOfCall = 0;
  // Created slots first: a tie may name a parameter the same call creates.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t j = 0; j < slots.size(); ++j) {
      const ParamSlot &slot = slots[j];
      if (slot.tied != (pass == 1))
        continue;
      SlotOrigin origin{CallSite{calleeName, callSite}};
      origin.insert(origin.end(), origins[j].begin(), origins[j].end());
      std::string path = joinPath(scope, slot.path);
      values[j] = slot.tied
                      ? addTiedSlot(cur(), path, slot.type, slot.loc, origin)
                      : addCreatedSlot(cur(), path, slot.type, slot.init,
                                       slot.buffer, slot.loc, origin);
    }
  }
  duplicatesOfCall = -1;
  return values;
}

int Sema::addCreatedSlot(FunctionState &st, const std::string &path,
                         const TensorType &type, const Initializer &init,
                         bool buffer, SourceLoc loc, const SlotOrigin &origin) {
  if (st.entry)
    return entryParam(path, type, init, buffer, loc, origin);
  auto existing = st.createdSlots.find(path);
  if (existing != st.createdSlots.end())
    reportDuplicateParam(joinPath(st.fullPrefix, path),
                         st.fn.params[existing->second].loc,
                         st.slotOrigins[existing->second], loc, origin);
  ParamSlot slot;
  slot.path = path;
  slot.type = type;
  slot.value = st.fn.addValue(type);
  slot.init = init;
  slot.buffer = buffer;
  slot.loc = loc;
  if (existing == st.createdSlots.end())
    st.createdSlots[path] = static_cast<int>(st.fn.params.size());
  st.fn.params.push_back(slot);
  st.slotOrigins.push_back(origin);
  return slot.value;
}

int Sema::addTiedSlot(FunctionState &st, const std::string &path,
                      const TensorType &type, SourceLoc loc,
                      const SlotOrigin &origin) {
  if (st.entry)
    return entryTiedParam(path, type, loc, origin);
  for (const std::map<std::string, int> *slots :
       {&st.createdSlots, &st.tiedSlots}) {
    auto it = slots->find(path);
    if (it == slots->end())
      continue;
    const ParamSlot &known = st.fn.params[it->second];
    if (known.type != type) {
      for (const CallSite &c : origin)
        diag.pushCall(c.callee, c.site);
      diag.error(loc, "the tied parameter '" + joinPath(st.fullPrefix, path) +
                          "' is used as " + type.str() + " here, but it is " +
                          known.type.str());
      for (size_t i = 0; i < origin.size(); ++i)
        diag.popCall();
    }
    return known.value;
  }
  ParamSlot slot;
  slot.path = path;
  slot.type = type;
  slot.tied = true;
  slot.value = st.fn.addValue(type);
  slot.loc = loc;
  st.tiedSlots[path] = static_cast<int>(st.fn.params.size());
  st.fn.params.push_back(slot);
  st.slotOrigins.push_back(origin);
  return slot.value;
}

} // namespace modelc::sema
