// Statements of block bodies (and the `let`/`assert` of entries): bindings
// and rebinding, `for` unrolled with a const loop variable, `if` decided at
// compile time, `assert`, `return`, and expression statements.
//
// Scoping: a block's arguments and size variables form the outer scope, its
// body the next; `let` and `param` may shadow an argument but not a name of
// the body. Each `for` iteration opens a scope of its own. `if` opens none,
// so that the branches can define a name (often a `param`) used after it.
#include "frontend/Sema.h"

namespace modelc::sema {

bool Sema::tick(SourceLoc loc) {
  if (++steps > kMaxSteps && !aborted) {
    diag.error(loc, "elaboration stopped after " + std::to_string(kMaxSteps) +
                        " statements; are the unrolled loops too large?");
    aborted = true;
  }
  return !aborted;
}

bool Sema::define(const std::string &name, const CValue &value, SourceLoc loc,
                  BindingKind kind) {
  FunctionState &st = cur();
  for (size_t i = st.firstLocalScope; i < st.scopes.size(); ++i) {
    auto it = st.scopes[i].find(name);
    if (it == st.scopes[i].end())
      continue;
    std::string message = "'" + name + "' is already defined";
    if (kind == BindingKind::Let)
      message += "; use `" + name + " = ...` to rebind it";
    diag.error(loc, message);
    diag.note(it->second.loc, "previous definition is here");
    return false;
  }
  st.scopes.back()[name] = Binding{value, loc, kind};
  return true;
}

void Sema::execStmts(const ast::StmtList &stmts) {
  for (const ast::StmtPtr &s : stmts) {
    if (!s)
      continue;
    if (cur().returned || cur().stopped || aborted)
      break;
    execStmt(*s);
  }
}

void Sema::execStmt(const ast::Stmt &s) {
  DepthGuard guard(*this, s.loc);
  if (!guard.ok() || !tick(s.loc))
    return;
  switch (s.kind) {
  case ast::Stmt::Kind::Let:
    return execLet(*s.as<ast::LetStmt>());
  case ast::Stmt::Kind::Assign:
    return execAssign(*s.as<ast::AssignStmt>());
  case ast::Stmt::Kind::Return:
    return execReturn(*s.as<ast::ReturnStmt>());
  case ast::Stmt::Kind::For:
    return execFor(*s.as<ast::ForStmt>());
  case ast::Stmt::Kind::If:
    return execIf(*s.as<ast::IfStmt>());
  case ast::Stmt::Kind::Assert:
    return execAssert(*s.as<ast::AssertStmt>());
  case ast::Stmt::Kind::Param:
    return execParam(*s.as<ast::ParamStmt>());
  case ast::Stmt::Kind::Expr:
    return execExprStmt(*s.as<ast::ExprStmt>());
  case ast::Stmt::Kind::Group:
  case ast::Stmt::Kind::Input:
  case ast::Stmt::Kind::Output:
    return; // reported when the block was declared
  }
}

void Sema::execLet(const ast::LetStmt &s) {
  CValue v = eval(s.value.get());
  auto locOf = [&](size_t i) {
    return i < s.nameLocs.size() && s.nameLocs[i].isValid() ? s.nameLocs[i]
                                                            : s.loc;
  };
  if (!s.destructure) {
    if (!s.names.empty())
      define(s.names[0], v, locOf(0), BindingKind::Let);
    return;
  }
  bool fits = v.kind == CValue::Kind::List && v.list.size() == s.names.size();
  if (!fits && v.kind != CValue::Kind::None) {
    SourceLoc at = s.value ? s.value->loc : s.loc;
    if (v.kind == CValue::Kind::List)
      diag.error(at, "cannot destructure a list of " +
                         std::to_string(v.list.size()) + " values into " +
                         std::to_string(s.names.size()) + " names");
    else
      diag.error(at, "cannot destructure " + describe(v) + " into " +
                         std::to_string(s.names.size()) +
                         " names; only lists (such as the results of split "
                         "or of a block with several results) can be");
  }
  for (size_t i = 0; i < s.names.size(); ++i)
    define(s.names[i], fits ? v.list[i] : CValue(), locOf(i), BindingKind::Let);
}

void Sema::execAssign(const ast::AssignStmt &s) {
  CValue v = eval(s.value.get());
  Binding *b = lookupMutable(s.name);
  if (!b) {
    diag.error(s.loc, "'" + s.name + "' is not defined; use `let " + s.name +
                          " = ...` to define it");
    define(s.name, CValue(), s.loc, BindingKind::Let);
    return;
  }
  if (b->kind == BindingKind::SizeVar || b->kind == BindingKind::LoopVar) {
    diag.error(s.loc, "cannot assign to " +
                          std::string(b->kind == BindingKind::SizeVar
                                          ? "size variable '"
                                          : "loop variable '") +
                          s.name + "'; use `let` for a new name");
    return;
  }
  b->value = v;
}

void Sema::execFor(const ast::ForStmt &s) {
  std::optional<int64_t> lo = evalInt(s.lo.get(), "the start of a 'for' range");
  std::optional<int64_t> hi = evalInt(s.hi.get(), "the end of a 'for' range");
  if (!lo || !hi || *hi <= *lo)
    return;
  if (static_cast<__int128>(*hi) - *lo > kMaxLoopIterations) {
    diag.error(s.loc, "this 'for' loop would unroll " +
                          std::to_string(static_cast<unsigned long long>(
                              static_cast<__int128>(*hi) - *lo)) +
                          " iterations; at most " +
                          std::to_string(kMaxLoopIterations) + " are allowed");
    return;
  }
  SourceLoc varLoc = s.varLoc.isValid() ? s.varLoc : s.loc;
  for (int64_t i = *lo; i < *hi; ++i) {
    unsigned errorsBefore = diag.errorCount();
    cur().scopes.emplace_back();
    bool ok = define(s.var, CValue::ofInt(i), varLoc, BindingKind::LoopVar);
    if (ok)
      execStmts(s.body);
    cur().scopes.pop_back();
    // One iteration's errors are enough: the next ones would repeat them.
    if (!ok || diag.errorCount() != errorsBefore || cur().returned ||
        cur().stopped || aborted)
      break;
  }
}

void Sema::execIf(const ast::IfStmt &s) {
  CValue c = eval(s.cond.get());
  if (c.kind == CValue::Kind::Bool) {
    execStmts(c.b ? s.thenBody : s.elseBody);
    return;
  }
  if (c.kind == CValue::Kind::None)
    return;
  diag.error(s.cond->loc,
             "the condition of 'if' must be a compile-time bool, got " +
                 describe(c) +
                 (c.isTensor() ? "; to choose between tensors elementwise "
                                 "use where(cond, a, b)"
                               : ""));
}

void Sema::execAssert(const ast::AssertStmt &s) {
  CValue c = eval(s.cond.get());
  if (c.kind == CValue::Kind::None)
    return;
  if (c.kind != CValue::Kind::Bool) {
    diag.error(s.cond->loc,
               "'assert' needs a compile-time bool condition, got " +
                   describe(c));
    return;
  }
  if (c.b)
    return;
  std::string message = exprText(s.cond.get());
  if (s.message) {
    std::optional<std::string> m = evalString(s.message.get(), "the message "
                                                               "of 'assert'");
    if (!m)
      return;
    message = *m;
  }
  diag.error(s.loc, "assertion failed: " + message);
  // The assert guards what follows: elaborating it would only report the
  // errors it was written to prevent.
  cur().stopped = true;
}

void Sema::execReturn(const ast::ReturnStmt &s) {
  FunctionState &st = cur();
  std::vector<CValue> values;
  std::vector<SourceLoc> locs;
  for (const ast::ExprPtr &e : s.values) {
    values.push_back(eval(e.get()));
    locs.push_back(e ? e->loc : s.loc);
  }
  st.returnValues = std::move(values);
  st.returnLocs = std::move(locs);
  st.returnLoc = s.loc;
  st.returned = true;
}

void Sema::execExprStmt(const ast::ExprStmt &s) {
  const ast::Expr *e = s.value.get();
  CValue v = eval(e);
  // A block call may be made for its parameters; anything else is unused.
  const ast::Expr *call = e;
  if (const auto *a = e ? e->as<ast::AsExpr>() : nullptr)
    call = a->call.get();
  const auto *c = call ? call->as<ast::CallExpr>() : nullptr;
  const auto *name = c && c->callee ? c->callee->as<ast::NameExpr>() : nullptr;
  bool blockCall = c && (!name || curModule().blocks.count(name->name));
  if (!blockCall && v.kind != CValue::Kind::None)
    diag.warning(s.loc, "the value of this expression is unused");
}

} // namespace modelc::sema
