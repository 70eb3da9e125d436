// Shared machinery of the built-in operations (private to Builtins*.cpp):
// signatures and argument binding, kind checks with their messages, axis
// normalisation, and the operand unification that elementwise ops share.
#pragma once

#include "frontend/Builtins.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc::builtins {

class BuiltinCall;
using BuiltinFn = std::optional<CValue> (*)(BuiltinCall &call);

/// One parameter of a signature. `defaultText` is how its default reads in
/// messages ("-1", "k"); null when the parameter is required; "?" when it is
/// optional and has no default (conv2d's `b`).
struct ParamInfo {
  const char *name;
  const char *defaultText;
};

struct BuiltinDef {
  const char *name;
  std::vector<ParamInfo> params;
  BuiltinFn fn;
};

/// The built-ins of each family, defined in the file of that family.
const std::vector<BuiltinDef> &elementwiseBuiltins();
const std::vector<BuiltinDef> &reduceBuiltins();
const std::vector<BuiltinDef> &shapeBuiltins();
const std::vector<BuiltinDef> &nnBuiltins();
const std::vector<BuiltinDef> &lossBuiltins();

/// "softmax(x, axis = -1)", for messages about arguments.
std::string signatureText(const BuiltinDef &def);

/// How a value reads in messages: "f32[2, 3]", "int 3", "float 0.5",
/// "bool true", "string \"a\"", "list [1, 2]".
std::string describe(const CValue &value, const GraphBuilder &builder);
/// Shortest text that reads back as `value` ("0.1", "1e-05", "2.0").
std::string formatFloat(double value);
/// "[2, 3]".
std::string formatShape(const std::vector<int64_t> &shape);

/// A size computed from int64 sizes (a sum, an output length) before it is
/// known to fit: 128 bits hold any such size exactly.
using WideSize = shape_rules::WideSize;

/// `shape`, a result shape that `op` computed from its arguments, once it is
/// known to fit: every size and the element count in int64, as declared types
/// must. Otherwise reports "<op> result shape [...] has too many elements" at
/// `loc` and returns nullopt. Every built-in whose result can have more
/// elements than an operand (broadcasting, concat, matmul, conv, pooling,
/// embedding, attention) checks its result shape here; the others (reshape,
/// slices, reductions) cannot overflow, as every operand fits.
std::optional<std::vector<int64_t>>
checkResultShape(GraphBuilder &builder, const std::string &op,
                 const std::vector<WideSize> &shape, SourceLoc loc);
std::optional<std::vector<int64_t>>
checkResultShape(GraphBuilder &builder, const std::string &op,
                 const std::vector<int64_t> &shape, SourceLoc loc);

/// `axis` in -rank..rank-1 made non-negative; reports (naming `op`, `param`
/// and `type`) and returns nullopt when out of range.
std::optional<int64_t> normaliseAxis(GraphBuilder &builder,
                                     const std::string &op,
                                     const std::string &param, int64_t axis,
                                     const TensorType &type, SourceLoc loc);

/// A rank-0 constant of `dtype` holding the compile-time scalar `value`
/// (exact for integers).
int scalarConstant(GraphBuilder &builder, const CValue &value, DType dtype,
                   SourceLoc loc);

/// Operands of an elementwise op (`op` as the user spells it, e.g. "'+'"):
/// tensors must share one element type; compile-time scalars become rank-0
/// constants of that type (an int fits any numeric type it is in range of,
/// a float needs a float type, a bool needs bool). When no operand is a
/// tensor, the type is f32 if any scalar is a float, else i64 for ints, else
/// bool (as PyTorch types Python scalars). Returns the value ids, or nullopt
/// after reporting.
std::optional<std::vector<int>>
unifyOperands(GraphBuilder &builder, const std::string &op,
              const std::vector<const Arg *> &operands, SourceLoc loc);

/// The NumPy broadcast of the operands' shapes; reports at `loc` when they
/// are incompatible or the result has too many elements.
std::optional<std::vector<int64_t>>
broadcastOperands(GraphBuilder &builder, const std::string &op,
                  const std::vector<int> &operands, SourceLoc loc);

/// `a @ b` as torch.matmul (BuiltinsNN.cpp).
std::optional<CValue> emitMatmul(GraphBuilder &builder, const Arg &lhs,
                                 const Arg &rhs, SourceLoc loc);

/// Compile-time folding of operators on scalars (BuiltinsFold.cpp). Reports
/// division by zero, overflow and kind errors at `loc`.
std::optional<CValue> foldBinary(GraphBuilder &builder, ast::BinaryExpr::Op op,
                                 const Arg &lhs, const Arg &rhs, SourceLoc loc);
std::optional<CValue> foldUnary(GraphBuilder &builder, ast::UnaryExpr::Op op,
                                const Arg &operand, SourceLoc loc);
/// Folds a unary math built-in (`exp`, `sqrt`, `relu`, ...) on a compile-time
/// scalar into a Float (`abs`, `neg`, `relu` keep an Int an Int).
std::optional<CValue> foldMath(GraphBuilder &builder, const std::string &name,
                               const Arg &operand, SourceLoc loc);
/// "'+'" style spelling of an operator for messages.
std::string operatorName(ast::BinaryExpr::Op op);

/// A call of one built-in with its arguments bound to parameters.
class BuiltinCall {
public:
  BuiltinCall(const BuiltinDef &def, SourceLoc loc, const BuiltinContext &ctx,
              GraphBuilder &builder)
      : def(def), loc(loc), ctx(ctx), builder(builder),
        bound(def.params.size(), nullptr) {}

  /// Binds positional then keyword arguments; reports unknown, duplicate,
  /// surplus and missing arguments. False after reporting.
  bool bind(const std::vector<Arg> &args);

  /// "'softmax'": the op as messages name it.
  std::string quoted() const { return "'" + std::string(def.name) + "'"; }
  const char *name() const { return def.name; }
  const char *param(size_t i) const { return def.params[i].name; }
  bool has(size_t i) const { return bound[i] != nullptr; }
  const Arg &arg(size_t i) const { return *bound[i]; }
  const CValue &value(size_t i) const { return bound[i]->value; }
  /// The argument's location, or the call's when it was not given.
  SourceLoc locOf(size_t i) const { return has(i) ? bound[i]->loc : loc; }

  std::nullopt_t error(SourceLoc at, const std::string &message);
  std::nullopt_t error(size_t i, const std::string &message) {
    return error(locOf(i), message);
  }

  /// Kind checks: each reports "'op' expects <kind> for <param>, got ...".
  std::optional<int> tensor(size_t i);
  /// A tensor with a float element type ("'exp' needs a float tensor ...").
  std::optional<int> floatTensor(size_t i);
  std::optional<int64_t> intArg(size_t i, int64_t dflt);
  std::optional<double> floatArg(size_t i, double dflt);
  std::optional<bool> boolArg(size_t i, bool dflt);
  std::optional<std::string> stringArg(size_t i, const std::string &dflt);
  /// An int or a list of ints.
  std::optional<std::vector<int64_t>> intList(size_t i);
  /// An int (used twice) or a 2-list, as conv and pooling sizes; each from
  /// `min` to 2^31 - 1.
  std::optional<std::vector<int64_t>>
  intPair(size_t i, const std::vector<int64_t> &dflt, int64_t min);
  /// An axis of `type`, normalised non-negative.
  std::optional<int64_t> axis(size_t i, int64_t dflt, const TensorType &type);
  /// An int or a list of axes, sorted and normalised; every axis when the
  /// argument is absent. Duplicates are an error.
  std::optional<std::vector<int64_t>> axes(size_t i, const TensorType &type);

  const TensorType &typeOf(int value) const { return builder.typeOf(value); }
  std::string describeArg(size_t i) const {
    return describe(value(i), builder);
  }

  const BuiltinDef &def;
  SourceLoc loc;
  const BuiltinContext &ctx;
  GraphBuilder &builder;

private:
  std::nullopt_t kindError(size_t i, const std::string &expected);
  std::vector<const Arg *> bound;
};

} // namespace modelc::builtins
