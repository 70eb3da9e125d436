// Source-like text of AST expressions and types, for dumps and messages.
#include "frontend/ASTDump.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace modelc {

using namespace ast;

const char *binaryOpSpelling(BinaryExpr::Op op) {
  switch (op) {
  case BinaryExpr::Op::Or:
    return "||";
  case BinaryExpr::Op::And:
    return "&&";
  case BinaryExpr::Op::Eq:
    return "==";
  case BinaryExpr::Op::Ne:
    return "!=";
  case BinaryExpr::Op::Lt:
    return "<";
  case BinaryExpr::Op::Le:
    return "<=";
  case BinaryExpr::Op::Gt:
    return ">";
  case BinaryExpr::Op::Ge:
    return ">=";
  case BinaryExpr::Op::Add:
    return "+";
  case BinaryExpr::Op::Sub:
    return "-";
  case BinaryExpr::Op::Mul:
    return "*";
  case BinaryExpr::Op::Div:
    return "/";
  case BinaryExpr::Op::Mod:
    return "%";
  case BinaryExpr::Op::MatMul:
    return "@";
  }
  return "?";
}

namespace {

int binaryPrecedence(BinaryExpr::Op op) {
  switch (op) {
  case BinaryExpr::Op::Or:
    return 1;
  case BinaryExpr::Op::And:
    return 2;
  case BinaryExpr::Op::Add:
  case BinaryExpr::Op::Sub:
    return 4;
  case BinaryExpr::Op::Mul:
  case BinaryExpr::Op::Div:
  case BinaryExpr::Op::Mod:
  case BinaryExpr::Op::MatMul:
    return 5;
  default:
    return 3; // comparisons
  }
}

constexpr int kUnaryPrecedence = 6;
constexpr int kAsPrecedence = 7;
constexpr int kPostfixPrecedence = 8;

int precedenceOf(const Expr &expr) {
  switch (expr.kind) {
  case Expr::Kind::Binary:
    return binaryPrecedence(expr.as<BinaryExpr>()->op);
  case Expr::Kind::Unary:
    return kUnaryPrecedence;
  case Expr::Kind::As:
    return kAsPrecedence;
  case Expr::Kind::Range:
    return 0;
  default:
    return kPostfixPrecedence;
  }
}

/// The shortest text that reads back as the same double, written as Python's
/// repr would: fixed notation for exponents -4..15 (0.001, 2500.0), else
/// scientific (1e-05); always with a '.' or an exponent.
std::string formatFloat(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  char text[64];
  int digits = 1;
  for (; digits < 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*e", digits - 1, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  std::snprintf(text, sizeof text, "%.*e", digits - 1, value);
  int exponent = std::atoi(std::strchr(text, 'e') + 1);
  if (exponent >= -4 && exponent < 16)
    std::snprintf(text, sizeof text, "%.*f", std::max(0, digits - 1 - exponent),
                  value);
  std::string result(text);
  if (result.find_first_of(".e") == std::string::npos)
    result += ".0";
  return result;
}

std::string parenthesise(const Expr &expr, int minPrecedence) {
  std::string text = formatExpr(expr);
  return precedenceOf(expr) < minPrecedence ? "(" + text + ")" : text;
}

template <typename T, typename F>
std::string join(const std::vector<T> &items, F format) {
  std::string text;
  for (const T &item : items) {
    if (!text.empty())
      text += ", ";
    text += format(item);
  }
  return text;
}

} // namespace

std::string formatExpr(const Expr &expr) {
  switch (expr.kind) {
  case Expr::Kind::Int:
    return std::to_string(expr.as<IntExpr>()->value);
  case Expr::Kind::Float:
    return formatFloat(expr.as<FloatExpr>()->value);
  case Expr::Kind::String:
    return quoteString(expr.as<StringExpr>()->value);
  case Expr::Kind::Bool:
    return expr.as<BoolExpr>()->value ? "true" : "false";
  case Expr::Kind::Name:
    return expr.as<NameExpr>()->name;
  case Expr::Kind::Unary: {
    const auto *unary = expr.as<UnaryExpr>();
    return (unary->op == UnaryExpr::Op::Neg ? "-" : "!") +
           parenthesise(*unary->operand, kUnaryPrecedence);
  }
  case Expr::Kind::Binary: {
    const auto *binary = expr.as<BinaryExpr>();
    int prec = binaryPrecedence(binary->op);
    // Left-associative; comparisons do not chain, so both sides need it.
    int lhsMin = prec == 3 ? prec + 1 : prec;
    return parenthesise(*binary->lhs, lhsMin) + " " +
           binaryOpSpelling(binary->op) + " " +
           parenthesise(*binary->rhs, prec + 1);
  }
  case Expr::Kind::Call: {
    const auto *call = expr.as<CallExpr>();
    std::string args =
        join(call->args, [](const ExprPtr &arg) { return formatExpr(*arg); });
    std::string kwargs = join(call->kwargs, [](const KeywordArg &kwarg) {
      return kwarg.name + " = " + formatExpr(*kwarg.value);
    });
    std::string sep = !args.empty() && !kwargs.empty() ? ", " : "";
    return parenthesise(*call->callee, kPostfixPrecedence) + "(" + args + sep +
           kwargs + ")";
  }
  case Expr::Kind::Member: {
    const auto *member = expr.as<MemberExpr>();
    return parenthesise(*member->base, kPostfixPrecedence) + "." +
           member->field;
  }
  case Expr::Kind::Index: {
    const auto *index = expr.as<IndexExpr>();
    return parenthesise(*index->base, kPostfixPrecedence) + "[" +
           join(index->items, formatIndexItem) + "]";
  }
  case Expr::Kind::List:
    return "[" +
           join(expr.as<ListExpr>()->elements,
                [](const ExprPtr &e) { return formatExpr(*e); }) +
           "]";
  case Expr::Kind::As: {
    const auto *scoped = expr.as<AsExpr>();
    return parenthesise(*scoped->call, kAsPrecedence) + " as " +
           formatPath(scoped->scope);
  }
  case Expr::Kind::ParamRef:
    return "&" + formatPath(expr.as<ParamRefExpr>()->path);
  case Expr::Kind::Range: {
    const auto *range = expr.as<RangeExpr>();
    return formatExpr(*range->lo) + " .. " + formatExpr(*range->hi);
  }
  case Expr::Kind::Interpolated: {
    const auto *name = expr.as<InterpolatedNameExpr>();
    std::string out = name->texts[0];
    for (size_t i = 0; i < name->parts.size(); ++i)
      out += "{" + formatExpr(*name->parts[i]) + "}" + name->texts[i + 1];
    return out;
  }
  }
  return "?";
}

std::string formatType(const TypeExpr &type) {
  if (!type.isTensor)
    return type.name;
  return type.name + "[" +
         join(type.dims,
              [](const DimExpr &dim) {
                if (dim.variadic)
                  return "*" + dim.variadicName;
                return dim.size ? formatExpr(*dim.size) : std::string("?");
              }) +
         "]";
}

std::string quoteString(const std::string &value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string formatPath(const std::vector<PathComponent> &path) {
  std::string text;
  for (const PathComponent &component : path) {
    if (!text.empty())
      text += '.';
    text += component.name;
    if (component.index)
      text += "[" + formatExpr(*component.index) + "]";
  }
  return text;
}

std::string formatIndexItem(const IndexItem &item) {
  switch (item.kind) {
  case IndexItem::Kind::Ellipsis:
    return "...";
  case IndexItem::Kind::Single:
    return item.index ? formatExpr(*item.index) : "";
  case IndexItem::Kind::Slice:
    break;
  }
  std::string text = item.lo ? formatExpr(*item.lo) : "";
  text += ":";
  if (item.hi)
    text += formatExpr(*item.hi);
  if (item.step)
    text += ":" + formatExpr(*item.step);
  return text;
}

} // namespace modelc
