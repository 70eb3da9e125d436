// Checks of block declarations that need no call: the signature (argument
// names and types, defaults, `*name` dims) and the structure of the body
// (statements that blocks may not hold, code after `return`). A block whose
// signature is wrong is never elaborated, so its calls report nothing more.
#include "frontend/Sema.h"

namespace modelc::sema {

namespace {
bool isScalarKind(const std::string &name) {
  return name == "int" || name == "float" || name == "bool" || name == "string";
}
} // namespace

bool Sema::checkTypeExpr(const ast::TypeExpr &type, bool allowScalar,
                         bool allowVariadic) {
  DType dtype;
  bool isDType = parseDType(type.name, dtype); // `bool` is both
  if (isScalarKind(type.name) && !(isDType && type.isTensor)) {
    if (!allowScalar) {
      diag.error(type.loc, "expected a tensor type such as f32[n], got '" +
                               type.name + "'");
      return false;
    }
    if (type.isTensor) {
      diag.error(type.loc, "'" + type.name +
                               "' is a compile-time scalar and has no shape; "
                               "for a tensor write an element type such as "
                               "i32[...]");
      return false;
    }
    return true;
  }
  if (!isDType) {
    diag.error(
        type.loc,
        "unknown type '" + type.name +
            "'; element types are f32, f16, bf16, f64, i32, i64, u8, "
            "u16, bool" +
            (allowScalar ? " and scalars are int, float, bool, string" : ""));
    return false;
  }
  if (!type.isTensor) {
    diag.error(type.loc, "'" + type.name + "' needs a shape: " + type.name +
                             "[...] (" + type.name + "[] for a scalar tensor)");
    return false;
  }
  bool ok = true;
  const ast::DimExpr *variadic = nullptr;
  for (const ast::DimExpr &d : type.dims) {
    if (!d.variadic) {
      if (!d.size) // the parser reported it
        ok = false;
      continue;
    }
    if (!allowVariadic) {
      diag.error(d.loc, "'*" + d.variadicName +
                            "' is only allowed in block signatures");
      ok = false;
    } else if (variadic) {
      diag.error(d.loc, "a type may have only one '*' dimension; '*" +
                            variadic->variadicName + "' comes first");
      ok = false;
    }
    variadic = &d;
  }
  return ok;
}

void Sema::checkBlockDecl(ModuleInfo &mod, const ast::BlockDecl &decl) {
  bool ok = true;
  std::map<std::string, SourceLoc> names;
  for (const ast::BlockArg &arg : decl.args) {
    auto [it, fresh] = names.emplace(arg.name, arg.loc);
    if (!fresh) {
      diag.error(arg.loc, "argument '" + arg.name + "' is declared twice");
      diag.note(it->second, "first declared here");
      ok = false;
    }
    if (!checkTypeExpr(arg.type, /*allowScalar=*/true, /*allowVariadic=*/true))
      ok = false;
    else if (arg.type.isTensor && arg.defaultValue) {
      diag.error(arg.defaultValue->loc,
                 "tensor argument '" + arg.name +
                     "' cannot have a default; only int, float, bool and "
                     "string arguments can");
      ok = false;
    }
  }
  for (const ast::TypeExpr &result : decl.results)
    if (!checkTypeExpr(result, /*allowScalar=*/false, /*allowVariadic=*/true))
      ok = false;
  if (!ok)
    mod.badBlocks.insert(&decl);
  checkBodyStructure(decl.body);
}

void Sema::checkBodyStructure(const ast::StmtList &body) {
  DepthGuard guard(*this, body.empty() ? SourceLoc{} : body.front()->loc);
  if (!guard.ok())
    return;
  bool afterReturn = false;
  for (const ast::StmtPtr &s : body) {
    if (!s)
      continue;
    if (afterReturn) {
      diag.error(s->loc, "statement after 'return' is never reached");
      afterReturn = false; // once per list
      break;
    }
    switch (s->kind) {
    case ast::Stmt::Kind::Return:
      afterReturn = true;
      break;
    case ast::Stmt::Kind::For:
      checkBodyStructure(s->as<ast::ForStmt>()->body);
      break;
    case ast::Stmt::Kind::If:
      checkBodyStructure(s->as<ast::IfStmt>()->thenBody);
      checkBodyStructure(s->as<ast::IfStmt>()->elseBody);
      break;
    case ast::Stmt::Kind::Input:
      diag.error(s->loc, "'input' declarations belong in infer entries, not "
                         "in blocks; blocks take tensors as arguments");
      break;
    case ast::Stmt::Kind::Output:
      diag.error(s->loc, "'output' declarations belong in infer entries; a "
                         "block returns its results with 'return'");
      break;
    case ast::Stmt::Kind::Group:
      diag.error(s->loc, "settings groups such as '" +
                             s->as<ast::GroupStmt>()->name +
                             " { ... }' belong in train entries, not in "
                             "blocks");
      break;
    default:
      break;
    }
  }
}

} // namespace modelc::sema
