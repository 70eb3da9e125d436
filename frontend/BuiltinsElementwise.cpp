// Elementwise operations: the arithmetic, comparison and logical operators,
// unary math (`exp`, `relu`, `gelu`, ...), `pow`, `maximum`, `minimum`,
// `where`, and the casts `f32(x)`, `i32(x)`, ...
#include "frontend/BuiltinsArgs.h"

#include <cmath>
#include <cstdint>

namespace modelc {

using namespace builtins;
using BinOp = ast::BinaryExpr::Op;

namespace {
const char *comparePredicate(BinOp op) {
  switch (op) {
  case BinOp::Eq:
    return "eq";
  case BinOp::Ne:
    return "ne";
  case BinOp::Lt:
    return "lt";
  case BinOp::Le:
    return "le";
  case BinOp::Gt:
    return "gt";
  case BinOp::Ge:
    return "ge";
  default:
    return nullptr;
  }
}

const char *arithmeticOpName(BinOp op) {
  switch (op) {
  case BinOp::Add:
    return "add";
  case BinOp::Sub:
    return "sub";
  case BinOp::Mul:
    return "mul";
  case BinOp::Div:
    return "div";
  case BinOp::Mod:
    return "rem";
  case BinOp::And:
    return "and";
  default:
    return "or";
  }
}
} // namespace

std::optional<CValue> applyBinary(BinOp op, const Arg &lhs, const Arg &rhs,
                                  SourceLoc loc, GraphBuilder &builder) {
  if (!lhs.value.isTensor() && !rhs.value.isTensor())
    return foldBinary(builder, op, lhs, rhs, loc);
  if (op == BinOp::MatMul)
    return emitMatmul(builder, lhs, rhs, loc);

  const std::string name = operatorName(op);
  std::optional<std::vector<int>> ids =
      unifyOperands(builder, name, {&lhs, &rhs}, loc);
  if (!ids)
    return std::nullopt;
  const TensorType &a = builder.typeOf((*ids)[0]);
  const TensorType &b = builder.typeOf((*ids)[1]);
  DiagnosticEngine &diag = builder.diagnostics();
  bool logical = op == BinOp::And || op == BinOp::Or;
  const char *predicate = comparePredicate(op);
  if (logical && a.dtype != DType::Bool) {
    diag.error(loc, name + " needs bool tensors, got " + a.str() + " and " +
                        b.str() + "; compare first, e.g. x > 0");
    return std::nullopt;
  }
  if (!logical && !predicate && a.dtype == DType::Bool) {
    diag.error(loc, name + " cannot do arithmetic on bool tensors, got " +
                        a.str() + " and " + b.str() +
                        "; convert with i32(...) or use '&&' / '||'");
    return std::nullopt;
  }
  if (op == BinOp::Div && !isFloat(a.dtype)) {
    diag.error(loc, "'/' needs float tensors, got " + a.str() + " and " +
                        b.str() + "; convert with f32(...)");
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> shape =
      broadcastOperands(builder, name, *ids, loc);
  if (!shape)
    return std::nullopt;
  if (predicate) {
    AttrDict attrs{{"predicate", Attr(predicate)}};
    return CValue::ofTensor(builder.emit1("compare", *ids,
                                          TensorType{DType::Bool, *shape},
                                          std::move(attrs), loc));
  }
  TensorType result{a.dtype, *shape};
  return CValue::ofTensor(
      builder.emit1(arithmeticOpName(op), *ids, result, {}, loc));
}

std::optional<CValue> applyUnary(ast::UnaryExpr::Op op, const Arg &operand,
                                 SourceLoc loc, GraphBuilder &builder) {
  if (!operand.value.isTensor())
    return foldUnary(builder, op, operand, loc);
  const TensorType &type = builder.typeOf(operand.value);
  if (op == ast::UnaryExpr::Op::Not) {
    if (type.dtype != DType::Bool) {
      builder.diagnostics().error(operand.loc,
                                  "'!' needs a bool tensor, got " + type.str());
      return std::nullopt;
    }
    return CValue::ofTensor(
        builder.emit1("not", {operand.value.tensor}, type, {}, loc));
  }
  if (type.dtype == DType::Bool) {
    builder.diagnostics().error(operand.loc, "'-' cannot negate " + type.str() +
                                                 "; use '!' on bool tensors");
    return std::nullopt;
  }
  return CValue::ofTensor(
      builder.emit1("neg", {operand.value.tensor}, type, {}, loc));
}

namespace {
/// `exp(x)`, `relu(x)`, ...: float tensors (`neg`, `abs`, `relu` also
/// integer ones); compile-time numbers fold.
std::optional<CValue> unaryMath(BuiltinCall &call) {
  const std::string name = call.name();
  if (!call.value(0).isTensor() && name != "gelu")
    return foldMath(call.builder, name, call.arg(0), call.loc);
  bool integerToo = name == "neg" || name == "abs" || name == "relu";
  std::optional<int> x = call.tensor(0);
  if (!x)
    return std::nullopt;
  const TensorType &type = call.typeOf(*x);
  if (!isFloat(type.dtype) && !(integerToo && isInteger(type.dtype)))
    return call.error(0, call.quoted() + " needs a " +
                             (integerToo ? "numeric" : "float") +
                             " tensor for 'x', got " + type.str() +
                             "; convert with f32(...)");
  AttrDict attrs;
  if (name == "gelu") {
    std::optional<std::string> approximate = call.stringArg(1, "none");
    if (!approximate)
      return std::nullopt;
    if (*approximate != "none" && *approximate != "tanh")
      return call.error(
          1, "'gelu' expects 'approximate' to be \"none\" or \"tanh\", got \"" +
                 *approximate + "\"");
    attrs["approximate"] = Attr(*approximate);
  }
  return CValue::ofTensor(
      call.builder.emit1(name, {*x}, type, std::move(attrs), call.loc));
}

std::optional<CValue> foldPowMaxMin(BuiltinCall &call) {
  const CValue &a = call.value(0), &b = call.value(1);
  for (size_t i = 0; i < 2; ++i) {
    CValue::Kind k = call.value(i).kind;
    if (k != CValue::Kind::Int && k != CValue::Kind::Float)
      return call.error(i, call.quoted() +
                               " expects a tensor or a number for '" +
                               call.param(i) + "', got " + call.describeArg(i));
  }
  const std::string name = call.name();
  bool ints = a.kind == CValue::Kind::Int && b.kind == CValue::Kind::Int;
  double x = a.kind == CValue::Kind::Int ? a.i : a.f;
  double y = b.kind == CValue::Kind::Int ? b.i : b.f;
  if (name == "maximum" || name == "minimum") {
    bool first = name == "maximum" ? x >= y : x <= y;
    return first ? a : b;
  }
  if (ints && b.i >= 0) {
    // Square and multiply: the base is squared only while bits of the
    // exponent remain, so an overflow there means the result overflows.
    int64_t r = 1, base = a.i;
    bool overflow = false;
    for (int64_t e = b.i; e > 0 && !overflow; e >>= 1) {
      if (e & 1)
        overflow = __builtin_mul_overflow(r, base, &r);
      if (e > 1 && !overflow)
        overflow = __builtin_mul_overflow(base, base, &base);
    }
    if (overflow)
      return call.error(call.loc, "'pow' overflows int64 in pow(" +
                                      std::to_string(a.i) + ", " +
                                      std::to_string(b.i) + ")");
    return CValue::ofInt(r);
  }
  double r = std::pow(x, y);
  if (!std::isfinite(r))
    return call.error(call.loc, "'pow' of " + call.describeArg(0) + " and " +
                                    call.describeArg(1) +
                                    " is not a finite number");
  return CValue::ofFloat(r);
}

/// `pow(x, p)`, `maximum(a, b)`, `minimum(a, b)`: broadcasting binary ops.
std::optional<CValue> binaryMath(BuiltinCall &call) {
  if (!call.value(0).isTensor() && !call.value(1).isTensor())
    return foldPowMaxMin(call);
  std::optional<std::vector<int>> ids = unifyOperands(
      call.builder, call.quoted(), {&call.arg(0), &call.arg(1)}, call.loc);
  if (!ids)
    return std::nullopt;
  const TensorType &type = call.typeOf((*ids)[0]);
  if (type.dtype == DType::Bool)
    return call.error(call.loc, call.quoted() +
                                    " cannot apply to bool tensors, got " +
                                    type.str());
  if (call.name() == std::string("pow") && isInteger(type.dtype) &&
      call.value(1).kind == CValue::Kind::Int && call.value(1).i < 0)
    return call.error(1,
                      "'pow' cannot raise integers to a negative power, got " +
                          call.describeArg(1) + "; convert with f32(...)");
  std::optional<std::vector<int64_t>> shape =
      broadcastOperands(call.builder, call.quoted(), *ids, call.loc);
  if (!shape)
    return std::nullopt;
  return CValue::ofTensor(call.builder.emit1(
      call.name(), *ids, TensorType{type.dtype, *shape}, {}, call.loc));
}

/// `where(c, a, b)`: c a bool tensor; a and b of one type; all broadcast.
std::optional<CValue> where(BuiltinCall &call) {
  const CValue &c = call.value(0);
  if (!c.isTensor() || call.typeOf(c.tensor).dtype != DType::Bool)
    return call.error(0, "'where' expects a bool tensor for 'c', got " +
                             call.describeArg(0) +
                             (c.kind == CValue::Kind::Bool
                                  ? "; use `if` for a compile-time condition"
                                  : ""));
  std::optional<std::vector<int>> ids = unifyOperands(
      call.builder, "'where'", {&call.arg(1), &call.arg(2)}, call.loc);
  if (!ids)
    return std::nullopt;
  std::vector<int> operands{c.tensor, (*ids)[0], (*ids)[1]};
  std::optional<std::vector<int64_t>> shape =
      broadcastOperands(call.builder, "'where'", operands, call.loc);
  if (!shape)
    return std::nullopt;
  TensorType result{call.typeOf((*ids)[0]).dtype, *shape};
  return CValue::ofTensor(
      call.builder.emit1("where", operands, result, {}, call.loc));
}

/// A cast of a compile-time scalar: a number of the target's kind (floats
/// stay f64-exact; integers truncate toward zero and wrap to the target's
/// width as a tensor cast would; bool is "nonzero").
std::optional<CValue> foldCast(BuiltinCall &call, DType target) {
  const CValue &v = call.value(0);
  if (!v.isScalar())
    return call.error(0, call.quoted() +
                             " expects a tensor or a number for 'x', got " +
                             call.describeArg(0));
  double asDouble = v.kind == CValue::Kind::Float ? v.f
                    : v.kind == CValue::Kind::Int ? static_cast<double>(v.i)
                                                  : (v.b ? 1.0 : 0.0);
  if (isFloat(target))
    return CValue::ofFloat(asDouble);
  if (target == DType::Bool)
    return CValue::ofBool(asDouble != 0);
  int64_t i = v.kind == CValue::Kind::Int ? v.i : static_cast<int64_t>(0);
  if (v.kind == CValue::Kind::Bool)
    i = v.b ? 1 : 0;
  if (v.kind == CValue::Kind::Float) {
    if (!std::isfinite(v.f) || std::fabs(v.f) >= 9.2e18)
      return call.error(0, call.quoted() + " cannot convert " +
                               call.describeArg(0) + " to an integer");
    i = static_cast<int64_t>(std::trunc(v.f));
  }
  switch (target) {
  case DType::I32:
    return CValue::ofInt(static_cast<int32_t>(static_cast<uint32_t>(i)));
  case DType::U8:
    return CValue::ofInt(static_cast<uint8_t>(i));
  case DType::U16:
    return CValue::ofInt(static_cast<uint16_t>(i));
  default:
    return CValue::ofInt(i);
  }
}

/// `f32(x)`, `i64(x)`, ...: a `cast` (none when the type already matches).
std::optional<CValue> cast(BuiltinCall &call) {
  DType target = DType::F32;
  parseDType(call.name(), target);
  if (!call.value(0).isTensor())
    return foldCast(call, target);
  const TensorType &type = call.typeOf(call.value(0).tensor);
  if (type.dtype == target)
    return call.value(0);
  return CValue::ofTensor(call.builder.emit1("cast", {call.value(0).tensor},
                                             TensorType{target, type.shape}, {},
                                             call.loc));
}
} // namespace

namespace builtins {
const std::vector<BuiltinDef> &elementwiseBuiltins() {
  static const std::vector<BuiltinDef> defs = [] {
    std::vector<BuiltinDef> d;
    for (const char *name : {"neg", "exp", "log", "sqrt", "rsqrt", "abs",
                             "tanh", "sigmoid", "relu", "silu"})
      d.push_back({name, {{"x", nullptr}}, unaryMath});
    d.push_back(
        {"gelu", {{"x", nullptr}, {"approximate", "\"none\""}}, unaryMath});
    d.push_back({"pow", {{"x", nullptr}, {"p", nullptr}}, binaryMath});
    d.push_back({"maximum", {{"a", nullptr}, {"b", nullptr}}, binaryMath});
    d.push_back({"minimum", {{"a", nullptr}, {"b", nullptr}}, binaryMath});
    d.push_back(
        {"where", {{"c", nullptr}, {"a", nullptr}, {"b", nullptr}}, where});
    for (const char *name :
         {"f32", "f16", "bf16", "f64", "i32", "i64", "u8", "u16", "bool"})
      d.push_back({name, {{"x", nullptr}}, cast});
    return d;
  }();
  return defs;
}
} // namespace builtins

} // namespace modelc
