// Compile-time folding of operators and math built-ins on scalars, so that
// shape arithmetic such as `(h + 2*p - k)/s + 1` and `c / n_head` stays an
// int, `1.0 / sqrt(d)` a float, and `if` conditions a bool.
//
// Rules (as Python, except `/`):
//   int op int -> int for + - * / %; `/` is floor division (as Python's `//`,
//     the only division that shape arithmetic needs) and `%` takes the sign
//     of the divisor, so (a / b) * b + a % b == a;
//   an int with a float -> float, with Python's `/` and `%`;
//   comparisons -> bool; `==`/`!=` also on bools and strings; `+` joins
//     strings; `&&`, `||`, `!` on bools;
//   division by zero, integer overflow and non-finite results are errors.
#include "frontend/BuiltinsArgs.h"

#include <cmath>
#include <cstdint>

namespace modelc::builtins {

using BinOp = ast::BinaryExpr::Op;

std::string operatorName(BinOp op) {
  switch (op) {
  case BinOp::Or:
    return "'||'";
  case BinOp::And:
    return "'&&'";
  case BinOp::Eq:
    return "'=='";
  case BinOp::Ne:
    return "'!='";
  case BinOp::Lt:
    return "'<'";
  case BinOp::Le:
    return "'<='";
  case BinOp::Gt:
    return "'>'";
  case BinOp::Ge:
    return "'>='";
  case BinOp::Add:
    return "'+'";
  case BinOp::Sub:
    return "'-'";
  case BinOp::Mul:
    return "'*'";
  case BinOp::Div:
    return "'/'";
  case BinOp::Mod:
    return "'%'";
  case BinOp::MatMul:
    return "'@'";
  }
  return "'?'";
}

namespace {
bool isComparison(BinOp op) {
  return op == BinOp::Eq || op == BinOp::Ne || op == BinOp::Lt ||
         op == BinOp::Le || op == BinOp::Gt || op == BinOp::Ge;
}

template <typename T> bool compare(BinOp op, T a, T b) {
  switch (op) {
  case BinOp::Eq:
    return a == b;
  case BinOp::Ne:
    return a != b;
  case BinOp::Lt:
    return a < b;
  case BinOp::Le:
    return a <= b;
  case BinOp::Gt:
    return a > b;
  default:
    return a >= b;
  }
}

std::optional<CValue> foldInts(GraphBuilder &builder, BinOp op, int64_t a,
                               int64_t b, SourceLoc loc) {
  if (isComparison(op))
    return CValue::ofBool(compare(op, a, b));
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
  case BinOp::Add:
    overflow = __builtin_add_overflow(a, b, &r);
    break;
  case BinOp::Sub:
    overflow = __builtin_sub_overflow(a, b, &r);
    break;
  case BinOp::Mul:
    overflow = __builtin_mul_overflow(a, b, &r);
    break;
  case BinOp::Div:
  case BinOp::Mod: {
    if (b == 0) {
      builder.diagnostics().error(loc,
                                  "division by zero in " + std::to_string(a) +
                                      (op == BinOp::Div ? " / " : " % ") + "0");
      return std::nullopt;
    }
    if (a == INT64_MIN && b == -1) {
      overflow = true;
      break;
    }
    int64_t q = a / b, m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) {
      q -= 1;
      m += b;
    }
    r = op == BinOp::Div ? q : m;
    break;
  }
  default:
    break;
  }
  if (overflow) {
    builder.diagnostics().error(loc, operatorName(op) + " overflows int64 in " +
                                         std::to_string(a) + " and " +
                                         std::to_string(b));
    return std::nullopt;
  }
  return CValue::ofInt(r);
}

std::optional<CValue> foldFloats(GraphBuilder &builder, BinOp op, double a,
                                 double b, SourceLoc loc) {
  if (isComparison(op))
    return CValue::ofBool(compare(op, a, b));
  if ((op == BinOp::Div || op == BinOp::Mod) && b == 0) {
    builder.diagnostics().error(loc, "division by zero in " + formatFloat(a) +
                                         (op == BinOp::Div ? " / " : " % ") +
                                         formatFloat(b));
    return std::nullopt;
  }
  double r = 0;
  switch (op) {
  case BinOp::Add:
    r = a + b;
    break;
  case BinOp::Sub:
    r = a - b;
    break;
  case BinOp::Mul:
    r = a * b;
    break;
  case BinOp::Div:
    r = a / b;
    break;
  default:
    r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0)))
      r += b;
    break;
  }
  if (!std::isfinite(r) && std::isfinite(a) && std::isfinite(b)) {
    builder.diagnostics().error(loc, operatorName(op) + " overflows in " +
                                         formatFloat(a) + " and " +
                                         formatFloat(b));
    return std::nullopt;
  }
  return CValue::ofFloat(r);
}

bool isNumber(const CValue &v) {
  return v.kind == CValue::Kind::Int || v.kind == CValue::Kind::Float;
}
double asDouble(const CValue &v) {
  return v.kind == CValue::Kind::Int ? static_cast<double>(v.i) : v.f;
}
} // namespace

std::optional<CValue> foldBinary(GraphBuilder &builder, BinOp op,
                                 const Arg &lhs, const Arg &rhs,
                                 SourceLoc loc) {
  const CValue &a = lhs.value, &b = rhs.value;
  using K = CValue::Kind;
  if (op == BinOp::And || op == BinOp::Or) {
    for (const Arg *side : {&lhs, &rhs}) {
      if (side->value.kind != K::Bool) {
        builder.diagnostics().error(side->loc,
                                    operatorName(op) + " needs bools, got " +
                                        describe(side->value, builder));
        return std::nullopt;
      }
    }
    return CValue::ofBool(op == BinOp::And ? a.b && b.b : a.b || b.b);
  }
  if (op != BinOp::MatMul) {
    if (a.kind == K::Int && b.kind == K::Int)
      return foldInts(builder, op, a.i, b.i, loc);
    if (isNumber(a) && isNumber(b))
      return foldFloats(builder, op, asDouble(a), asDouble(b), loc);
    bool sameKind = a.kind == b.kind;
    bool equality = op == BinOp::Eq || op == BinOp::Ne;
    if (sameKind && a.kind == K::Bool && equality)
      return CValue::ofBool((a.b == b.b) == (op == BinOp::Eq));
    if (sameKind && a.kind == K::String && equality)
      return CValue::ofBool((a.s == b.s) == (op == BinOp::Eq));
    if (sameKind && a.kind == K::String && op == BinOp::Add)
      return CValue::ofString(a.s + b.s);
  }
  builder.diagnostics().error(loc, operatorName(op) + " cannot apply to " +
                                       describe(a, builder) + " and " +
                                       describe(b, builder));
  return std::nullopt;
}

std::optional<CValue> foldUnary(GraphBuilder &builder, ast::UnaryExpr::Op op,
                                const Arg &operand, SourceLoc loc) {
  const CValue &v = operand.value;
  if (op == ast::UnaryExpr::Op::Not) {
    if (v.kind == CValue::Kind::Bool)
      return CValue::ofBool(!v.b);
    builder.diagnostics().error(operand.loc, "'!' needs a bool, got " +
                                                 describe(v, builder));
    return std::nullopt;
  }
  if (v.kind == CValue::Kind::Float)
    return CValue::ofFloat(-v.f);
  if (v.kind == CValue::Kind::Int && v.i != INT64_MIN)
    return CValue::ofInt(-v.i);
  if (v.kind == CValue::Kind::Int) {
    builder.diagnostics().error(loc, "'-' overflows int64 in -(" +
                                         std::to_string(v.i) + ")");
    return std::nullopt;
  }
  builder.diagnostics().error(operand.loc,
                              "'-' cannot negate " + describe(v, builder));
  return std::nullopt;
}

std::optional<CValue> foldMath(GraphBuilder &builder, const std::string &name,
                               const Arg &operand, SourceLoc loc) {
  const CValue &v = operand.value;
  if (!isNumber(v)) {
    builder.diagnostics().error(
        operand.loc, "'" + name +
                         "' expects a tensor or a number for 'x', got " +
                         describe(v, builder));
    return std::nullopt;
  }
  if (v.kind == CValue::Kind::Int && v.i != INT64_MIN) {
    if (name == "neg")
      return CValue::ofInt(-v.i);
    if (name == "abs")
      return CValue::ofInt(v.i < 0 ? -v.i : v.i);
    if (name == "relu")
      return CValue::ofInt(v.i < 0 ? 0 : v.i);
  }
  double x = asDouble(v), r = 0;
  if (name == "neg")
    r = -x;
  else if (name == "abs")
    r = std::fabs(x);
  else if (name == "relu")
    r = x < 0 ? 0 : x;
  else if (name == "exp")
    r = std::exp(x);
  else if (name == "log")
    r = std::log(x);
  else if (name == "sqrt")
    r = std::sqrt(x);
  else if (name == "rsqrt")
    r = 1 / std::sqrt(x);
  else if (name == "tanh")
    r = std::tanh(x);
  else if (name == "sigmoid")
    r = 1 / (1 + std::exp(-x));
  else if (name == "silu")
    r = x / (1 + std::exp(-x));
  if (!std::isfinite(r)) {
    builder.diagnostics().error(loc, "'" + name + "' of " +
                                         describe(v, builder) +
                                         " is not a finite number");
    return std::nullopt;
  }
  return CValue::ofFloat(r);
}

} // namespace modelc::builtins
