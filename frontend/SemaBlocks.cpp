// Block calls: binding arguments to the signature, unifying tensor types,
// specialising each distinct (block, argument types, scalar values) once into
// a Function, checking what the body returns, and emitting the `call` op with
// the callee's parameters appended to its operands.
#include "frontend/Sema.h"

#include <algorithm>

namespace modelc::sema {

namespace {
/// `v` as a value of the scalar kind `kind` (an int is a float too).
std::optional<CValue> asScalarKind(const CValue &v, const std::string &kind) {
  if (kind == "int" && v.kind == CValue::Kind::Int)
    return v;
  if (kind == "float" && v.kind == CValue::Kind::Float)
    return v;
  if (kind == "float" && v.kind == CValue::Kind::Int)
    return CValue::ofFloat(static_cast<double>(v.i));
  if (kind == "bool" && v.kind == CValue::Kind::Bool)
    return v;
  if (kind == "string" && v.kind == CValue::Kind::String)
    return v;
  return std::nullopt;
}

std::string describeIn(const FunctionState &st, const CValue &v) {
  return describeValue(v, st.fn);
}
} // namespace

std::string Sema::signatureText(const ast::BlockDecl &decl,
                                const std::string &qualName) const {
  std::string out = qualName + "(";
  for (size_t i = 0; i < decl.args.size(); ++i) {
    const ast::BlockArg &a = decl.args[i];
    out += (i ? ", " : "") + a.name + ": " + typeExprText(a.type);
    if (a.defaultValue)
      out += " = " + exprText(a.defaultValue.get());
  }
  return out + ")";
}

std::string Sema::uniqueSymbol(const std::string &qualName) {
  // One counter per name, so that the N-th specialisation of a block costs
  // no more than the first (a per-call scan from `_1` is quadratic).
  std::string symbol = qualName;
  unsigned &next = nextSymbolSuffix[qualName];
  while (usedSymbols.count(symbol))
    symbol = qualName + "_" + std::to_string(++next);
  usedSymbols.insert(symbol);
  return symbol;
}

bool Sema::bindBlockArgs(const ast::BlockDecl &decl,
                         const std::string &qualName,
                         const std::vector<Arg> &args, SourceLoc loc,
                         std::vector<const Arg *> &bound) {
  bound.assign(decl.args.size(), nullptr);
  std::string sig = signatureText(decl, qualName);
  size_t positional = std::count_if(
      args.begin(), args.end(), [](const Arg &a) { return a.keyword.empty(); });
  if (positional > decl.args.size()) {
    diag.error(args[decl.args.size()].loc,
               "'" + qualName + "' takes " + std::to_string(decl.args.size()) +
                   " argument" + (decl.args.size() == 1 ? "" : "s") + " but " +
                   std::to_string(positional) + " were given: " + sig);
    return false;
  }
  bool ok = true;
  size_t next = 0;
  for (const Arg &a : args) {
    if (a.keyword.empty()) {
      bound[next++] = &a;
      continue;
    }
    auto it = std::find_if(
        decl.args.begin(), decl.args.end(),
        [&](const ast::BlockArg &b) { return b.name == a.keyword; });
    if (it == decl.args.end()) {
      std::vector<std::string> names;
      for (const ast::BlockArg &b : decl.args)
        names.push_back(b.name);
      diag.error(a.loc, "'" + qualName + "' has no argument '" + a.keyword +
                            "'" + didYouMean(a.keyword, names) + "; it takes " +
                            sig);
      ok = false;
      continue;
    }
    size_t j = static_cast<size_t>(it - decl.args.begin());
    if (bound[j]) {
      diag.error(a.loc, "argument '" + a.keyword + "' of '" + qualName +
                            "' is given twice");
      diag.note(bound[j]->loc, "first given here");
      ok = false;
      continue;
    }
    bound[j] = &a;
  }
  std::vector<std::string> missing;
  for (size_t j = 0; j < decl.args.size(); ++j)
    if (!bound[j] && !decl.args[j].defaultValue)
      missing.push_back("'" + decl.args[j].name + "'");
  if (!missing.empty() && ok) {
    diag.error(loc, "call to '" + qualName + "' is missing argument" +
                        (missing.size() == 1 ? " " : "s ") +
                        joinNames(missing) + "; it takes " + sig);
    ok = false;
  }
  return ok;
}

bool Sema::bindSignature(FunctionState &callee, const ast::BlockDecl &decl,
                         const std::string &qualName,
                         const std::vector<const Arg *> &bound,
                         std::vector<int> &tensorArgs, std::string &key) {
  const FunctionState &caller = *frames[frames.size() - 2];
  std::vector<std::string> parts;
  bool ok = true;
  for (size_t i = 0; i < decl.args.size() && ok; ++i) {
    const ast::BlockArg &a = decl.args[i];
    std::string declared = a.name + ": " + typeExprText(a.type);
    CValue value;
    SourceLoc loc;
    if (bound[i]) {
      value = bound[i]->value;
      loc = bound[i]->loc;
    } else {
      value = eval(a.defaultValue.get()); // the defaults see earlier args
      loc = a.defaultValue->loc;
      if (value.kind == CValue::Kind::None)
        return false;
    }
    if (!a.type.isTensor) {
      std::optional<CValue> v = asScalarKind(value, a.type.name);
      if (!v) {
        diag.error(
            loc, "'" + qualName + "' expects " + declared + ", got " +
                     (bound[i] ? describeIn(caller, value) : describe(value)));
        return false;
      }
      value = *v;
      parts.push_back(a.name + "=" + literalText(value));
    } else {
      if (!value.isTensor()) {
        diag.error(loc, "'" + qualName + "' expects " + declared + ", got " +
                            describeIn(caller, value));
        return false;
      }
      TensorType actual = caller.fn.values[value.tensor];
      UnifyResult r = unify(a.type, actual, a.name);
      if (r.poisoned)
        return false;
      if (!r.ok) {
        diag.error(loc, "'" + qualName + "' expects " + declared + ", got " +
                            actual.str() +
                            (r.reason.empty() ? "" : " (" + r.reason + ")"));
        return false;
      }
      tensorArgs.push_back(value.tensor);
      value = CValue::ofTensor(callee.fn.addValue(actual));
      callee.fn.args.push_back(value.tensor);
      callee.fn.argNames.push_back(a.name);
      parts.push_back(actual.str());
    }
    Scope &sig = callee.scopes[0];
    auto [it, fresh] =
        sig.emplace(a.name, Binding{value, a.loc, BindingKind::Arg});
    if (!fresh) {
      diag.error(a.loc, "'" + a.name + "' is both an argument of '" + qualName +
                            "' and a size variable of argument '" +
                            callee.sizeVarOrigin[a.name] + "'; rename one");
      ok = false;
    }
  }
  key = qualName + "(";
  for (size_t i = 0; i < parts.size(); ++i)
    key += (i ? ", " : "") + parts[i];
  key += ")";
  return ok;
}

CValue Sema::callBlock(int module, const ast::BlockDecl &decl,
                       const std::string &qualName, const ast::CallExpr &call,
                       const std::vector<Arg> &args, const std::string *scope) {
  DepthGuard guard(*this, call.loc);
  if (!guard.ok() || modules[module]->badBlocks.count(&decl))
    return CValue();
  if (activeBlocks.count(&decl)) {
    diag.error(call.loc, "recursive call to '" + qualName +
                             "'; blocks cannot call themselves, directly or "
                             "through other blocks");
    return CValue();
  }
  std::vector<const Arg *> bound;
  if (!bindBlockArgs(decl, qualName, args, call.loc, bound))
    return CValue();

  FunctionState callee(module, diag);
  callee.block = &decl;
  callee.scopes.emplace_back();
  callee.fullPrefix = joinPath(cur().fullPrefix, scope ? *scope : "");
  std::vector<int> operands;
  std::string key;
  frames.push_back(&callee);
  bool bindOk = bindSignature(callee, decl, qualName, bound, operands, key);
  frames.pop_back();
  if (!bindOk)
    return CValue();

  int index;
  auto cached = specialisations.find(key);
  if (cached != specialisations.end()) {
    index = cached->second;
  } else {
    unsigned errorsBefore = diag.errorCount();
    callee.fn.symbol = uniqueSymbol(qualName);
    callee.fn.blockName = qualName;
    callee.fn.loc = decl.loc;
    callee.fn.key = key;
    elaborateBody(callee, decl, qualName, call.loc);
    if (diag.errorCount() != errorsBefore || callee.poisonedResult) {
      index = -1;
    } else {
      index = static_cast<int>(program.functions.size());
      program.functions.push_back(std::move(callee.fn));
      functionInfo.push_back(FunctionInfo{std::move(callee.slotOrigins)});
    }
    specialisations[key] = index;
  }
  if (index < 0)
    return CValue();

  std::vector<int> slotValues =
      passCalleeSlots(index, scope ? *scope : "", qualName, call.loc);
  operands.insert(operands.end(), slotValues.begin(), slotValues.end());
  std::vector<TensorType> resultTypes;
  for (int r : program.functions[index].results)
    resultTypes.push_back(program.functions[index].values[r]);
  std::vector<int> results =
      cur().builder.emit("call", operands, resultTypes, {}, call.loc);
  cur().fn.ops.back().callee = index;
  if (results.size() == 1)
    return CValue::ofTensor(results[0]);
  std::vector<CValue> list;
  for (int r : results)
    list.push_back(CValue::ofTensor(r));
  return CValue::ofList(std::move(list));
}

void Sema::elaborateBody(FunctionState &st, const ast::BlockDecl &decl,
                         const std::string &qualName, SourceLoc callSite) {
  st.signature = st.scopes[0];
  st.scopes.emplace_back();
  st.firstLocalScope = 1; // `let` and `param` may shadow arguments
  frames.push_back(&st);
  activeBlocks.insert(&decl);
  diag.pushCall(qualName, callSite);
  execStmts(decl.body);
  if (!aborted && !st.stopped)
    checkReturn(st, decl, qualName);
  diag.popCall();
  activeBlocks.erase(&decl);
  frames.pop_back();
}

void Sema::checkReturn(FunctionState &st, const ast::BlockDecl &decl,
                       const std::string &qualName) {
  size_t expected = decl.results.size();
  std::string declared;
  for (size_t i = 0; i < expected; ++i)
    declared += (i ? ", " : "") + typeExprText(decl.results[i]);
  if (expected > 1)
    declared = "(" + declared + ")";
  if (!st.returned) {
    if (expected)
      diag.error(decl.loc, "block '" + qualName +
                               "' ends without 'return'; its signature says "
                               "it returns " +
                               declared);
    return;
  }
  size_t got = st.returnValues.size();
  if (got != expected) {
    diag.error(st.returnLoc,
               "block '" + qualName + "' returns " + std::to_string(got) +
                   " value" + (got == 1 ? "" : "s") +
                   (expected ? " but its signature says " + declared
                             : " but its signature declares no results"));
    return;
  }
  for (size_t i = 0; i < expected; ++i) {
    const CValue &v = st.returnValues[i];
    SourceLoc loc = st.returnLocs[i];
    if (v.kind == CValue::Kind::None) {
      st.poisonedResult = true; // its error was reported where it arose
      continue;
    }
    std::string text = typeExprText(decl.results[i]);
    if (!v.isTensor()) {
      diag.error(loc, "block '" + qualName + "' returns " + describe(v) +
                          " but its signature says " + text);
      continue;
    }
    TensorType actual = st.fn.values[v.tensor];
    // Result types see the arguments and size variables as the call bound
    // them, not the body's names; a new name there is bound by the result.
    std::vector<Scope> body = std::move(st.scopes);
    st.scopes = {st.signature};
    UnifyResult r = unify(decl.results[i], actual, "");
    st.signature = st.scopes[0];
    st.scopes = std::move(body);
    if (r.poisoned)
      continue;
    if (!r.ok) {
      std::string detail;
      if (!r.expected.empty() && r.expected != text)
        detail = " = " + r.expected;
      else if (!r.reason.empty())
        detail = " (" + r.reason + ")";
      diag.error(loc, "block '" + qualName + "' returns " + actual.str() +
                          " but its signature says " + text + detail);
      continue;
    }
    st.fn.results.push_back(v.tensor);
  }
}

} // namespace modelc::sema
