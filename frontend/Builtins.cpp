// The table of built-in operations (spec §9): which names are built-ins, and
// the dispatch of a call to the family that implements it.
#include "frontend/BuiltinsArgs.h"

#include <map>

namespace modelc {

namespace {
using builtins::BuiltinDef;

const std::map<std::string, const BuiltinDef *> &builtinTable() {
  static const std::map<std::string, const BuiltinDef *> table = [] {
    std::map<std::string, const BuiltinDef *> t;
    for (const std::vector<BuiltinDef> *family :
         {&builtins::elementwiseBuiltins(), &builtins::reduceBuiltins(),
          &builtins::shapeBuiltins(), &builtins::nnBuiltins(),
          &builtins::lossBuiltins()})
      for (const BuiltinDef &def : *family)
        t.emplace(def.name, &def);
    return t;
  }();
  return table;
}
} // namespace

bool isBuiltin(const std::string &name) {
  return builtinTable().count(name) != 0;
}

std::optional<CValue> callBuiltin(const std::string &name,
                                  const std::vector<Arg> &args, SourceLoc loc,
                                  const BuiltinContext &ctx,
                                  GraphBuilder &builder) {
  auto it = builtinTable().find(name);
  if (it == builtinTable().end()) {
    builder.diagnostics().error(loc,
                                "'" + name + "' is not a built-in operation");
    return std::nullopt;
  }
  builtins::BuiltinCall call(*it->second, loc, ctx, builder);
  if (!call.bind(args))
    return std::nullopt;
  return it->second->fn(call);
}

} // namespace modelc
