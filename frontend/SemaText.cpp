// Text for sema's messages: expressions and types as the user wrote them,
// values as literals, lists of names, and "did you mean" suggestions.
#include "frontend/Sema.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace modelc::sema {

namespace {
using BinOp = ast::BinaryExpr::Op;

int precedence(BinOp op) {
  switch (op) {
  case BinOp::Or:
    return 1;
  case BinOp::And:
    return 2;
  case BinOp::Eq:
  case BinOp::Ne:
  case BinOp::Lt:
  case BinOp::Le:
  case BinOp::Gt:
  case BinOp::Ge:
    return 3;
  case BinOp::Add:
  case BinOp::Sub:
    return 4;
  default:
    return 5;
  }
}

const char *spelling(BinOp op) {
  static const char *const names[] = {"||", "&&", "==", "!=", "<", "<=", ">",
                                      ">=", "+",  "-",  "*",  "/", "%",  "@"};
  return names[static_cast<int>(op)];
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out + "\"";
}

std::string pathText(const std::vector<ast::PathComponent> &path, int depth);

/// Precedence of the expression's outermost operator (7: an atom).
int exprPrecedence(const ast::Expr *e) {
  if (const auto *b = e->as<ast::BinaryExpr>())
    return precedence(b->op);
  if (e->kind == ast::Expr::Kind::Unary)
    return 6;
  return 7;
}

std::string text(const ast::Expr *e, int depth) {
  if (!e)
    return "?";
  if (depth > 40)
    return "...";
  switch (e->kind) {
  case ast::Expr::Kind::Int:
    return std::to_string(e->as<ast::IntExpr>()->value);
  case ast::Expr::Kind::Float:
    return formatFloat(e->as<ast::FloatExpr>()->value);
  case ast::Expr::Kind::String:
    return quoted(e->as<ast::StringExpr>()->value);
  case ast::Expr::Kind::Bool:
    return e->as<ast::BoolExpr>()->value ? "true" : "false";
  case ast::Expr::Kind::Name:
    return e->as<ast::NameExpr>()->name;
  case ast::Expr::Kind::Unary: {
    const auto *u = e->as<ast::UnaryExpr>();
    std::string operand = text(u->operand.get(), depth + 1);
    if (u->operand && exprPrecedence(u->operand.get()) < 6)
      operand = "(" + operand + ")";
    return (u->op == ast::UnaryExpr::Op::Neg ? "-" : "!") + operand;
  }
  case ast::Expr::Kind::Binary: {
    const auto *b = e->as<ast::BinaryExpr>();
    int p = precedence(b->op);
    std::string lhs = text(b->lhs.get(), depth + 1);
    std::string rhs = text(b->rhs.get(), depth + 1);
    if (b->lhs && exprPrecedence(b->lhs.get()) < p)
      lhs = "(" + lhs + ")";
    if (b->rhs && exprPrecedence(b->rhs.get()) <= p)
      rhs = "(" + rhs + ")";
    return lhs + " " + spelling(b->op) + " " + rhs;
  }
  case ast::Expr::Kind::Call: {
    const auto *c = e->as<ast::CallExpr>();
    std::string out = text(c->callee.get(), depth + 1) + "(";
    bool first = true;
    for (const ast::ExprPtr &a : c->args) {
      out += (first ? "" : ", ") + text(a.get(), depth + 1);
      first = false;
    }
    for (const ast::KeywordArg &k : c->kwargs) {
      out +=
          (first ? "" : ", ") + k.name + " = " + text(k.value.get(), depth + 1);
      first = false;
    }
    return out + ")";
  }
  case ast::Expr::Kind::Member: {
    const auto *m = e->as<ast::MemberExpr>();
    return text(m->base.get(), depth + 1) + "." + m->field;
  }
  case ast::Expr::Kind::Index: {
    const auto *ix = e->as<ast::IndexExpr>();
    std::string out = text(ix->base.get(), depth + 1) + "[";
    for (size_t i = 0; i < ix->items.size(); ++i) {
      const ast::IndexItem &item = ix->items[i];
      out += i ? ", " : "";
      if (item.kind == ast::IndexItem::Kind::Ellipsis)
        out += "...";
      else if (item.kind == ast::IndexItem::Kind::Single)
        out += text(item.index.get(), depth + 1);
      else
        out += (item.lo ? text(item.lo.get(), depth + 1) : "") + ":" +
               (item.hi ? text(item.hi.get(), depth + 1) : "") +
               (item.step ? ":" + text(item.step.get(), depth + 1) : "");
    }
    return out + "]";
  }
  case ast::Expr::Kind::List: {
    const auto *l = e->as<ast::ListExpr>();
    std::string out = "[";
    for (size_t i = 0; i < l->elements.size(); ++i)
      out += (i ? ", " : "") + text(l->elements[i].get(), depth + 1);
    return out + "]";
  }
  case ast::Expr::Kind::As: {
    const auto *a = e->as<ast::AsExpr>();
    return text(a->call.get(), depth + 1) + " as " + pathText(a->scope, depth);
  }
  case ast::Expr::Kind::ParamRef:
    return "&" + pathText(e->as<ast::ParamRefExpr>()->path, depth);
  case ast::Expr::Kind::Interpolated: {
    const auto *name = e->as<ast::InterpolatedNameExpr>();
    std::string out = name->texts[0];
    for (size_t i = 0; i < name->parts.size(); ++i)
      out += "{" + text(name->parts[i].get(), depth + 1) + "}" +
             name->texts[i + 1];
    return out;
  }
  case ast::Expr::Kind::Range: {
    const auto *r = e->as<ast::RangeExpr>();
    return text(r->lo.get(), depth + 1) + " .. " + text(r->hi.get(), depth + 1);
  }
  }
  return "?";
}

std::string pathText(const std::vector<ast::PathComponent> &path, int depth) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    out += (i ? "." : "") + path[i].name;
    if (path[i].index)
      out += "[" + text(path[i].index.get(), depth + 1) + "]";
  }
  return out;
}

size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}
} // namespace

std::string exprText(const ast::Expr *expr) { return text(expr, 0); }

std::string typeExprText(const ast::TypeExpr &type) {
  if (!type.isTensor)
    return type.name;
  std::string out = type.name + "[";
  for (size_t i = 0; i < type.dims.size(); ++i) {
    const ast::DimExpr &d = type.dims[i];
    out += i ? ", " : "";
    out += d.variadic ? "*" + d.variadicName : exprText(d.size.get());
  }
  return out + "]";
}

std::string formatFloat(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

std::string literalText(const CValue &v) {
  switch (v.kind) {
  case CValue::Kind::Int:
    return std::to_string(v.i);
  case CValue::Kind::Float:
    return formatFloat(v.f);
  case CValue::Kind::Bool:
    return v.b ? "true" : "false";
  case CValue::Kind::String:
    return quoted(v.s);
  case CValue::Kind::List: {
    std::string out = "[";
    for (size_t i = 0; i < v.list.size(); ++i)
      out += (i ? ", " : "") + literalText(v.list[i]);
    return out + "]";
  }
  case CValue::Kind::Tensor:
    return "<tensor>";
  case CValue::Kind::None:
    break;
  }
  return "?";
}

std::string describeValue(const CValue &v, const Function &fn) {
  switch (v.kind) {
  case CValue::Kind::Tensor:
    if (v.tensor >= 0 && static_cast<size_t>(v.tensor) < fn.values.size())
      return fn.values[v.tensor].str();
    return "a tensor";
  case CValue::Kind::Int:
    return "int " + literalText(v);
  case CValue::Kind::Float:
    return "float " + literalText(v);
  case CValue::Kind::Bool:
    return "bool " + literalText(v);
  case CValue::Kind::String:
    return "string " + literalText(v);
  case CValue::Kind::List: {
    std::string out = "list [";
    for (size_t i = 0; i < v.list.size(); ++i)
      out +=
          (i ? ", " : "") + (v.list[i].isTensor() ? describeValue(v.list[i], fn)
                                                  : literalText(v.list[i]));
    return out + "]";
  }
  case CValue::Kind::None:
    break;
  }
  return "an invalid value";
}

std::string initializerText(const Initializer &init) {
  std::string out = init.kind + "(";
  for (size_t i = 0; i < init.args.size(); ++i)
    out += (i ? ", " : "") + formatFloat(init.args[i]);
  return out + ")";
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i ? ", " : "") + names[i];
  return out;
}

std::string joinWithAnd(const std::vector<std::string> &items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

std::string closestName(const std::string &name,
                        const std::vector<std::string> &candidates) {
  std::string best;
  size_t bestDistance = std::max<size_t>(1, name.size() / 3) + 1;
  for (const std::string &c : candidates) {
    if (c == name || c.size() > name.size() + bestDistance + 1)
      continue;
    size_t d = editDistance(name, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

std::string didYouMean(const std::string &name,
                       const std::vector<std::string> &candidates) {
  std::string best = closestName(name, candidates);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string joinPath(const std::string &prefix, const std::string &path) {
  if (prefix.empty())
    return path;
  if (path.empty())
    return prefix;
  return prefix + "." + path;
}

std::optional<int64_t> checkedElementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  }
  return n;
}

} // namespace modelc::sema
