// Type and shape rules of the built-in operations of spec §9, operators and
// indexing: each checks its arguments, folds compile-time values, and emits
// mdl ops through a GraphBuilder.
#pragma once

#include "dialects/mdl/ShapeRules.h"
#include "frontend/AST.h"
#include "frontend/Value.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc {

struct Arg {
  CValue value;
  SourceLoc loc;
  std::string keyword;  // empty for positional arguments
};

/// Built-in callable names (`relu`, `conv2d`, `f32`, ...). Does not include
/// initialisers (`zeros`, `normal`, ...) or data sources (`idx`, ...), which
/// sema handles where they are allowed.
bool isBuiltin(const std::string &name);

/// Context a few built-ins depend on.
struct BuiltinContext {
  bool inMetrics = false;  // `accuracy` is allowed only in metrics/outputs
};

/// Calls a built-in. Reports an error at the offending argument (or `loc`)
/// and returns nullopt when the arguments are wrong. Results: a Tensor, a
/// List of tensors (split), or a compile-time scalar when folded.
std::optional<CValue> callBuiltin(const std::string &name,
                                  const std::vector<Arg> &args, SourceLoc loc,
                                  const BuiltinContext &ctx,
                                  GraphBuilder &builder);

/// Binary operators, with constant folding of compile-time operands, NumPy
/// broadcasting, and Python-like scalars taking the tensor's dtype.
std::optional<CValue> applyBinary(ast::BinaryExpr::Op op, const Arg &lhs,
                                  const Arg &rhs, SourceLoc loc,
                                  GraphBuilder &builder);
std::optional<CValue> applyUnary(ast::UnaryExpr::Op op, const Arg &operand,
                                 SourceLoc loc, GraphBuilder &builder);

/// One evaluated index item (compile-time bounds).
struct IndexSpec {
  ast::IndexItem::Kind kind = ast::IndexItem::Kind::Single;
  SourceLoc loc;
  std::optional<int64_t> index;          // Single
  std::optional<int64_t> lo, hi, step;   // Slice
};
/// `x[...]` on a tensor: slices (static, with steps) and integer indices
/// (which drop the axis), `...` at most once. Also indexes compile-time lists.
std::optional<CValue> applyIndex(const Arg &base,
                                 const std::vector<IndexSpec> &items,
                                 SourceLoc loc, GraphBuilder &builder);

/// NumPy broadcast of two shapes; nullopt when incompatible.
using shape_rules::broadcastShapes;

} // namespace modelc
