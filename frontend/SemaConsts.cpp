// Top-level consts: evaluated in order when their file is loaded, each a
// compile-time int, float, bool or string; `-D NAME=VALUE` replaces those of
// the main file with a literal of the same kind.
#include "frontend/Sema.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace modelc::sema {

namespace {
const char *kindName(CValue::Kind kind) {
  switch (kind) {
  case CValue::Kind::Int:
    return "an int";
  case CValue::Kind::Float:
    return "a float";
  case CValue::Kind::Bool:
    return "a bool";
  case CValue::Kind::String:
    return "a string";
  default:
    return "a value";
  }
}

std::optional<int64_t> parseIntText(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || end == text.c_str())
    return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parseFloatText(const std::string &text) {
  if (text.empty() || text.find_first_of("xXnNiI") != std::string::npos)
    return std::nullopt; // no hex floats, nan or inf
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || end == text.c_str() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

/// A string value: quoted with .mdl escapes, or the text as it is.
std::optional<std::string> parseStringText(const std::string &text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"')
    return text;
  std::string out;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c != '\\') {
      if (c == '"')
        return std::nullopt;
      out += c;
      continue;
    }
    if (i + 2 >= text.size())
      return std::nullopt;
    char e = text[++i];
    if (e == 'n')
      out += '\n';
    else if (e == '"' || e == '\\')
      out += e;
    else
      return std::nullopt;
  }
  return out;
}
} // namespace

std::optional<CValue> Sema::defineOverride(const ast::ConstDecl &decl,
                                           const CValue &declared) {
  const std::pair<std::string, std::string> *define = nullptr;
  for (const auto &d : options.defines)
    if (d.first == decl.name)
      define = &d; // the last one wins, as with C compilers
  if (!define)
    return std::nullopt;
  const std::string &text = define->second;
  std::optional<CValue> value;
  switch (declared.kind) {
  case CValue::Kind::Int:
    if (auto i = parseIntText(text))
      value = CValue::ofInt(*i);
    break;
  case CValue::Kind::Float:
    if (auto f = parseFloatText(text))
      value = CValue::ofFloat(*f);
    break;
  case CValue::Kind::Bool:
    if (text == "true" || text == "false")
      value = CValue::ofBool(text == "true");
    break;
  case CValue::Kind::String:
    if (auto s = parseStringText(text))
      value = CValue::ofString(*s);
    break;
  default:
    return std::nullopt; // the declared value failed; already reported
  }
  if (!value) {
    diag.error(SourceLoc{}, "-D " + decl.name + "=" + text + ": '" + text +
                                "' is not " + kindName(declared.kind) +
                                ", and const '" + decl.name + "' is " +
                                kindName(declared.kind));
    diag.note(decl.loc, "'" + decl.name + "' is declared here");
    return CValue(); // poisoned: nothing else reports about it
  }
  return value;
}

void Sema::checkDefines() {
  const ModuleInfo &main = *modules[0];
  std::vector<std::string> names;
  for (const ast::ConstDecl &c : main.ast->consts)
    names.push_back(c.name);
  for (const auto &[name, value] : options.defines) {
    if (main.constDecls.count(name))
      continue;
    std::string message = "-D " + name + "=" + value + ": '" + main.path +
                          "' has no const '" + name + "'" +
                          didYouMean(name, names);
    message += names.empty() ? "; it declares no consts"
                             : "; its consts are " + joinNames(names);
    diag.error(SourceLoc{}, message);
  }
}

void Sema::evaluateConsts(int module) {
  ModuleInfo &mod = *modules[module];
  FunctionState scratch(module, diag);
  scratch.scopes.emplace_back();
  scratch.fn.symbol = "<consts>";
  frames.push_back(&scratch);
  for (const ast::ConstDecl &c : mod.ast->consts) {
    if (mod.duplicates.count(&c))
      continue;
    CValue v = eval(c.value.get());
    if (v.kind == CValue::Kind::Tensor || v.kind == CValue::Kind::List) {
      diag.error(c.value ? c.value->loc : c.loc,
                 "const '" + c.name +
                     "' must be a compile-time int, float, bool or string, "
                     "got " +
                     describe(v));
      v = CValue();
    }
    if (mod.isMain) {
      if (std::optional<CValue> overridden = defineOverride(c, v))
        v = *overridden;
    }
    mod.consts[c.name] = v;
  }
  frames.pop_back();
}

} // namespace modelc::sema
