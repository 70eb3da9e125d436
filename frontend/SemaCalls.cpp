// Calls: resolving the callee (a block of this module, a block of an imported
// module, or a built-in), evaluating the arguments, and binding the
// compile-time calls that settings, initialisers and data sources use.
#include "frontend/Sema.h"
#include "schema/Optimizers.h"
#include "schema/Schedules.h"

#include <algorithm>

namespace modelc::sema {

namespace {
bool contains(std::initializer_list<const char *> names,
              const std::string &name) {
  return std::any_of(names.begin(), names.end(),
                     [&](const char *n) { return name == n; });
}

bool poisonedArg(const CValue &v) {
  if (v.kind == CValue::Kind::None)
    return true;
  if (v.kind == CValue::Kind::List)
    return std::any_of(v.list.begin(), v.list.end(), poisonedArg);
  return false;
}

std::string qualify(const ModuleInfo &mod, const std::string &name) {
  return mod.qualName.empty() ? name : mod.qualName + "." + name;
}
} // namespace

std::string Sema::notCallableMessage(const std::string &n, bool own) {
  if (own)
    return "'" + n + "' cannot call itself; blocks are not recursive";
  if (contains({"normal", "uniform", "kaiming_uniform", "xavier_uniform",
                "truncated_normal"},
               n))
    return "'" + n + "' is an initialiser; it is only allowed in "
           "`param NAME: TYPE = " + n + "(...)`";
  if (isDataSourceName(n))
    return "'" + n + "' is a data source; it is only allowed in data "
                     "declarations";
  if (optimizers::findKind(n))
    return "'" + n + "' is an optimizer; it is only allowed in "
           "`optimizer = " + n + "(...)`";
  if (schedules::find(n))
    return "'" + n + "' is a learning-rate schedule; it is only allowed in "
           "`schedule = " + n + "(...)`";
  if (lookup(n))
    return "'" + n + "' is a value, not a function";
  std::vector<std::string> names;
  for (const auto &b : curModule().blocks)
    names.push_back(b.first);
  return "unknown function '" + n + "'" + didYouMean(n, names);
}

std::optional<Sema::Callee> Sema::resolveCallee(const ast::CallExpr &e) {
  const ast::Expr *callee = e.callee.get();
  const auto *member = callee ? callee->as<ast::MemberExpr>() : nullptr;
  const auto *alias =
      member && member->base ? member->base->as<ast::NameExpr>() : nullptr;
  if (const auto *name = callee ? callee->as<ast::NameExpr>() : nullptr) {
    // Function names are looked up apart from values: an argument called
    // `dropout` does not hide the built-in `dropout(...)`. A block's own name
    // inside its body means the built-in of that name (blocks never recurse).
    const ModuleInfo &mod = curModule();
    const std::string &n = name->name;
    auto it = mod.blocks.find(n);
    bool own = it != mod.blocks.end() && cur().block == it->second;
    if (it != mod.blocks.end() && !own)
      return Callee{it->second, cur().module, qualify(mod, n), ""};
    if (isBuiltin(n))
      return Callee{nullptr, -1, "", n};
    diag.error(name->loc, notCallableMessage(n, own));
    return std::nullopt;
  }
  if (alias && !lookup(alias->name)) {
    std::optional<int> m = importedModule(alias->name);
    if (!m) {
      diag.error(alias->loc, "unknown module '" + alias->name +
                                 "'; import it first: import \"" + alias->name +
                                 "\"");
      return std::nullopt;
    }
    if (*m < 0)
      return std::nullopt;
    const ModuleInfo &mod = *modules[*m];
    auto it = mod.blocks.find(member->field);
    if (it == mod.blocks.end()) {
      std::vector<std::string> names;
      for (const auto &b : mod.blocks)
        names.push_back(b.first);
      diag.error(member->fieldLoc.isValid() ? member->fieldLoc : member->loc,
                 "module '" + alias->name + "' has no block '" + member->field +
                     "'" + didYouMean(member->field, names));
      return std::nullopt;
    }
    return Callee{it->second, *m, qualify(mod, member->field), ""};
  }
  if (callee)
    diag.error(callee->loc, "only blocks and built-in operations can be "
                            "called; this is " +
                                exprText(callee));
  return std::nullopt;
}

CValue Sema::evalCall(const ast::CallExpr &e, const std::string *scope,
                      SourceLoc scopeLoc) {
  std::optional<Callee> resolved = resolveCallee(e);
  if (!resolved)
    return CValue();
  const ast::BlockDecl *block = resolved->block;
  const std::string &builtin = resolved->builtin;
  std::vector<Arg> args;
  bool bad = false;
  for (const ast::ExprPtr &a : e.args) {
    args.push_back(Arg{eval(a.get()), a ? ast::startLoc(*a) : e.loc, ""});
    bad = bad || poisonedArg(args.back().value);
  }
  for (const ast::KeywordArg &k : e.kwargs) {
    args.push_back(Arg{eval(k.value.get()), k.loc, k.name});
    bad = bad || poisonedArg(args.back().value);
  }
  if (block) {
    if (bad)
      return CValue();
    return callBlock(resolved->module, *block, resolved->qualName, e, args,
                     scope);
  }
  if (scope) {
    diag.error(scopeLoc, "'as' names the parameters that a block call "
                         "creates, but '" +
                             builtin + "' is a built-in operation");
    return CValue();
  }
  if (bad)
    return CValue();
  BuiltinContext ctx;
  ctx.inMetrics = cur().inMetrics;
  size_t before = cur().fn.values.size();
  std::optional<CValue> r =
      callBuiltin(builtin, args, e.loc, ctx, cur().builder);
  return checkNewValues(before, "'" + builtin + "'", e.loc, r);
}

namespace {
std::string constSignature(const std::string &name,
                           const std::vector<ConstParam> &params) {
  std::string out = name + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    out += (i ? ", " : "") + std::string(params[i].name);
    if (params[i].defaultValue)
      out += " = " + literalText(*params[i].defaultValue);
  }
  return out + ")";
}

const char *expectedKind(CValue::Kind kind) {
  switch (kind) {
  case CValue::Kind::Int:
    return "an int";
  case CValue::Kind::Float:
    return "a number";
  case CValue::Kind::Bool:
    return "a bool";
  case CValue::Kind::String:
    return "a string";
  default:
    return "a list of numbers";
  }
}

/// `v` converted to `kind` (int -> float, numbers in lists -> floats), or
/// nullopt when it is not of that kind.
/// `v` when it is a list of strings.
std::optional<CValue> stringList(const CValue &v) {
  if (v.kind != CValue::Kind::List ||
      std::any_of(v.list.begin(), v.list.end(), [](const CValue &e) {
        return e.kind != CValue::Kind::String;
      }))
    return std::nullopt;
  return v;
}

std::optional<CValue> convert(const CValue &v, CValue::Kind kind) {
  switch (kind) {
  case CValue::Kind::Float:
    if (v.kind == CValue::Kind::Int)
      return CValue::ofFloat(static_cast<double>(v.i));
    break;
  case CValue::Kind::List: {
    if (v.kind != CValue::Kind::List)
      return std::nullopt;
    std::vector<CValue> out;
    for (const CValue &e : v.list) {
      std::optional<CValue> f = convert(e, CValue::Kind::Float);
      if (!f)
        return std::nullopt;
      out.push_back(*f);
    }
    return CValue::ofList(std::move(out));
  }
  default:
    break;
  }
  if (v.kind == kind)
    return v;
  return std::nullopt;
}
} // namespace

std::optional<std::vector<CValue>>
Sema::bindConstArgs(const ast::CallExpr &call, const std::string &name,
                    const std::vector<ConstParam> &params) {
  std::vector<std::optional<CValue>> values(params.size());
  std::vector<SourceLoc> given(params.size());
  std::string sig = constSignature(name, params);
  bool ok = true;
  auto bind = [&](size_t i, const ast::Expr *expr, SourceLoc loc) {
    if (given[i].isValid()) {
      diag.error(loc, "argument '" + std::string(params[i].name) + "' of '" +
                          name + "' is given twice");
      diag.note(given[i], "first given here");
      ok = false;
      return;
    }
    given[i] = loc;
    CValue v = eval(expr);
    if (poisonedArg(v)) {
      ok = false;
      return;
    }
    bool strings = params[i].strings;
    values[i] = strings ? stringList(v) : convert(v, params[i].kind);
    if (!values[i]) {
      diag.error(loc, "'" + name + "' expects " +
                          (strings ? "a list of strings"
                                   : expectedKind(params[i].kind)) +
                          " for " + params[i].name + ", got " + describe(v));
      ok = false;
    }
  };
  for (size_t i = 0; i < call.args.size(); ++i) {
    const ast::Expr *a = call.args[i].get();
    SourceLoc loc = a ? ast::startLoc(*a) : call.loc;
    if (i >= params.size()) {
      diag.error(loc, "'" + name + "' takes " +
                          (params.empty()
                               ? std::string("no arguments")
                               : "at most " + std::to_string(params.size()) +
                                     " arguments") +
                          ": " + sig);
      return std::nullopt;
    }
    bind(i, a, loc);
  }
  for (const ast::KeywordArg &k : call.kwargs) {
    auto it =
        std::find_if(params.begin(), params.end(),
                     [&](const ConstParam &p) { return k.name == p.name; });
    if (it == params.end()) {
      diag.error(k.loc, "'" + name + "' has no argument '" + k.name +
                            "'; it takes " + sig);
      ok = false;
      continue;
    }
    bind(static_cast<size_t>(it - params.begin()), k.value.get(), k.loc);
  }
  std::vector<CValue> out;
  for (size_t i = 0; i < params.size(); ++i) {
    if (values[i]) {
      out.push_back(*values[i]);
    } else if (!given[i].isValid() && params[i].defaultValue) {
      out.push_back(*params[i].defaultValue);
    } else {
      if (!given[i].isValid() && ok)
        diag.error(call.loc, "'" + name + "' needs argument '" +
                                 params[i].name + "': " + sig);
      ok = false;
    }
  }
  if (!ok)
    return std::nullopt;
  return out;
}

std::optional<std::vector<CValue>>
Sema::bindConstCall(const ast::Expr &expr, const std::string &name,
                    const std::vector<ConstParam> &params) {
  if (const auto *call = expr.as<ast::CallExpr>())
    return bindConstArgs(*call, name, params);
  // A bare name (`schedule = constant`) is a call without arguments.
  ast::CallExpr empty(expr.loc, nullptr);
  return bindConstArgs(empty, name, params);
}

} // namespace modelc::sema
