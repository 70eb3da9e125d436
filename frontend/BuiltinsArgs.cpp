// Argument binding and kind checks shared by every built-in: positional then
// keyword arguments against a signature, and messages that name the op, the
// parameter and what was given in .mdl spelling.
#include "frontend/BuiltinsArgs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace modelc::builtins {

std::string formatFloat(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  std::string text = buf;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

namespace {
std::string wideText(WideSize n) {
  if (n < 0)
    return "-" + wideText(-n);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + n % 10));
    n /= 10;
  } while (n != 0);
  return digits;
}
} // namespace

std::optional<std::vector<int64_t>>
checkResultShape(GraphBuilder &builder, const std::string &op,
                 const std::vector<WideSize> &shape, SourceLoc loc) {
  constexpr WideSize kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> narrow;
  bool fits = true;
  for (WideSize d : shape) {
    fits = fits && d >= 0 && d <= kMax;
    narrow.push_back(static_cast<int64_t>(d));
  }
  if (fits && shape_rules::getElementCount(narrow))
    return narrow;
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + wideText(shape[i]);
  builder.diagnostics().error(loc, op + " result shape " + text +
                                       "] has too many elements");
  return std::nullopt;
}

std::optional<std::vector<int64_t>>
checkResultShape(GraphBuilder &builder, const std::string &op,
                 const std::vector<int64_t> &shape, SourceLoc loc) {
  return checkResultShape(
      builder, op, std::vector<WideSize>(shape.begin(), shape.end()), loc);
}

namespace {
/// A value without its kind: "3", "f32[2]", "[1, 2]".
std::string valueText(const CValue &value, const GraphBuilder &builder) {
  switch (value.kind) {
  case CValue::Kind::None:
    return "nothing";
  case CValue::Kind::Int:
    return std::to_string(value.i);
  case CValue::Kind::Float:
    return formatFloat(value.f);
  case CValue::Kind::Bool:
    return value.b ? "true" : "false";
  case CValue::Kind::String:
    return "\"" + value.s + "\"";
  case CValue::Kind::Tensor:
    return builder.typeOf(value).str();
  case CValue::Kind::List: {
    std::string text = "[";
    for (size_t i = 0; i < value.list.size(); ++i)
      text += (i ? ", " : "") + valueText(value.list[i], builder);
    return text + "]";
  }
  }
  return "?";
}
} // namespace

std::string describe(const CValue &value, const GraphBuilder &builder) {
  switch (value.kind) {
  case CValue::Kind::Int:
    return "int " + valueText(value, builder);
  case CValue::Kind::Float:
    return "float " + valueText(value, builder);
  case CValue::Kind::Bool:
    return "bool " + valueText(value, builder);
  case CValue::Kind::String:
    return "string " + valueText(value, builder);
  case CValue::Kind::List:
    return "list " + valueText(value, builder);
  default:
    return valueText(value, builder);
  }
}

std::string signatureText(const BuiltinDef &def) {
  std::string text = std::string(def.name) + "(";
  for (size_t i = 0; i < def.params.size(); ++i) {
    const ParamInfo &p = def.params[i];
    text += (i ? ", " : "") + std::string(p.name);
    if (p.defaultText && std::strcmp(p.defaultText, "?") == 0)
      text += "?";
    else if (p.defaultText)
      text += " = " + std::string(p.defaultText);
  }
  return text + ")";
}

std::optional<int64_t> normaliseAxis(GraphBuilder &builder,
                                     const std::string &op,
                                     const std::string &param, int64_t axis,
                                     const TensorType &type, SourceLoc loc) {
  int64_t rank = static_cast<int64_t>(type.shape.size());
  if (axis >= -rank && axis < rank)
    return axis < 0 ? axis + rank : axis;
  std::string valid = rank == 0 ? "a scalar tensor has no axes"
                                : "valid: " + std::to_string(-rank) + " to " +
                                      std::to_string(rank - 1);
  builder.diagnostics().error(
      loc, op + " '" + param + "' = " + std::to_string(axis) +
               " is out of range for " + type.str() + " (" + valid + ")");
  return std::nullopt;
}

std::nullopt_t BuiltinCall::error(SourceLoc at, const std::string &message) {
  builder.diagnostics().error(at, message);
  return std::nullopt;
}

bool BuiltinCall::bind(const std::vector<Arg> &args) {
  const size_t numParams = def.params.size();
  size_t positional = 0;
  bool sawKeyword = false;
  for (const Arg &a : args) {
    if (a.keyword.empty()) {
      if (sawKeyword) {
        error(a.loc,
              quoted() + ": positional argument after a keyword argument");
        return false;
      }
      if (positional >= numParams) {
        error(a.loc, quoted() + " takes " + std::to_string(numParams) +
                         " argument" + (numParams == 1 ? "" : "s") + ", got " +
                         std::to_string(args.size()) + ": " +
                         signatureText(def));
        return false;
      }
      bound[positional++] = &a;
      continue;
    }
    sawKeyword = true;
    size_t index = numParams;
    for (size_t i = 0; i < numParams; ++i)
      if (a.keyword == def.params[i].name)
        index = i;
    if (index == numParams) {
      std::string names;
      for (size_t i = 0; i < numParams; ++i)
        names += (i ? ", " : "") + std::string(def.params[i].name);
      error(a.loc, quoted() + " has no parameter '" + a.keyword +
                       "'; its parameters are " + names);
      return false;
    }
    if (bound[index]) {
      error(a.loc, quoted() + " got two values for '" + a.keyword + "'");
      return false;
    }
    bound[index] = &a;
  }
  for (size_t i = 0; i < numParams; ++i) {
    if (!bound[i] && !def.params[i].defaultText) {
      error(loc, quoted() + " is missing argument '" +
                     std::string(def.params[i].name) +
                     "': " + signatureText(def));
      return false;
    }
  }
  return true;
}

std::nullopt_t BuiltinCall::kindError(size_t i, const std::string &expected) {
  return error(i, quoted() + " expects " + expected + " for '" + param(i) +
                      "', got " + describeArg(i));
}

std::optional<int> BuiltinCall::tensor(size_t i) {
  if (!value(i).isTensor())
    return kindError(i, "a tensor");
  return value(i).tensor;
}

std::optional<int> BuiltinCall::floatTensor(size_t i) {
  if (!value(i).isTensor())
    return kindError(i, "a float tensor");
  const TensorType &type = typeOf(value(i).tensor);
  if (!isFloat(type.dtype))
    return error(i, quoted() + " needs a float tensor for '" + param(i) +
                        "', got " + type.str() + "; convert with f32(...)");
  return value(i).tensor;
}

std::optional<int64_t> BuiltinCall::intArg(size_t i, int64_t dflt) {
  if (!has(i))
    return dflt;
  if (value(i).kind != CValue::Kind::Int)
    return kindError(i, "an int");
  return value(i).i;
}

std::optional<double> BuiltinCall::floatArg(size_t i, double dflt) {
  if (!has(i))
    return dflt;
  if (value(i).kind == CValue::Kind::Int)
    return static_cast<double>(value(i).i);
  if (value(i).kind != CValue::Kind::Float)
    return kindError(i, "a float");
  return value(i).f;
}

std::optional<bool> BuiltinCall::boolArg(size_t i, bool dflt) {
  if (!has(i))
    return dflt;
  if (value(i).kind != CValue::Kind::Bool)
    return kindError(i, "a bool");
  return value(i).b;
}

std::optional<std::string> BuiltinCall::stringArg(size_t i,
                                                  const std::string &dflt) {
  if (!has(i))
    return dflt;
  if (value(i).kind != CValue::Kind::String)
    return kindError(i, "a string");
  return value(i).s;
}

std::optional<std::vector<int64_t>> BuiltinCall::intList(size_t i) {
  const CValue &v = value(i);
  if (v.kind == CValue::Kind::Int)
    return std::vector<int64_t>{v.i};
  if (v.kind != CValue::Kind::List)
    return kindError(i, "an int or a list of ints");
  std::vector<int64_t> ints;
  for (const CValue &e : v.list) {
    if (e.kind != CValue::Kind::Int)
      return kindError(i, "an int or a list of ints");
    ints.push_back(e.i);
  }
  return ints;
}

std::optional<std::vector<int64_t>>
BuiltinCall::intPair(size_t i, const std::vector<int64_t> &dflt, int64_t min) {
  if (!has(i))
    return dflt;
  const CValue &v = value(i);
  bool isPair = v.kind == CValue::Kind::List && v.list.size() == 2 &&
                v.list[0].kind == CValue::Kind::Int &&
                v.list[1].kind == CValue::Kind::Int;
  if (v.kind != CValue::Kind::Int && !isPair)
    return kindError(i, "an int or a list of two ints");
  std::vector<int64_t> pair =
      isPair ? std::vector<int64_t>{v.list[0].i, v.list[1].i}
             : std::vector<int64_t>{v.i, v.i};
  const int64_t max = INT32_MAX;
  if (pair[0] < min || pair[1] < min || pair[0] > max || pair[1] > max)
    return error(i, quoted() + " needs '" + param(i) + "' from " +
                        std::to_string(min) + " to " + std::to_string(max) +
                        ", got " + describeArg(i));
  return pair;
}

std::optional<int64_t> BuiltinCall::axis(size_t i, int64_t dflt,
                                         const TensorType &type) {
  std::optional<int64_t> raw = intArg(i, dflt);
  if (!raw)
    return std::nullopt;
  return normaliseAxis(builder, quoted(), param(i), *raw, type, locOf(i));
}

std::optional<std::vector<int64_t>> BuiltinCall::axes(size_t i,
                                                      const TensorType &type) {
  std::vector<int64_t> result;
  if (!has(i)) {
    for (size_t d = 0; d < type.shape.size(); ++d)
      result.push_back(static_cast<int64_t>(d));
    return result;
  }
  std::optional<std::vector<int64_t>> raw = intList(i);
  if (!raw)
    return std::nullopt;
  if (raw->empty())
    return error(i, quoted() + " needs at least one axis in '" +
                        std::string(param(i)) + "'; omit it to reduce all");
  for (int64_t a : *raw) {
    std::optional<int64_t> axis =
        normaliseAxis(builder, quoted(), param(i), a, type, locOf(i));
    if (!axis)
      return std::nullopt;
    if (std::find(result.begin(), result.end(), *axis) != result.end())
      return error(i, quoted() + " got axis " + std::to_string(*axis) +
                          " twice in '" + param(i) + "'");
    result.push_back(*axis);
  }
  std::sort(result.begin(), result.end());
  return result;
}

} // namespace modelc::builtins
