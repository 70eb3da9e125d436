// The module's symbols: parameters keep their full names (the keys of the
// saved files), and every other symbol is chosen to differ from them, since
// one symbol table holds them all. A parameter made outside any `as` scope
// has a bare name (`token`), which an entry, a data set or a block may have
// too; and an entry's functions and kernels are named `ENTRY.KIND...`,
// which a parameter in a scope of the entry's name may be.
#include "frontend/mlirgen/Emitter.h"

#include <set>

namespace modelc::mlirgen {

ModuleSymbols chooseModuleSymbols(const Program &program) {
  std::set<std::string> taken, scopes;
  for (const Parameter &param : program.params) {
    taken.insert(param.name);
    for (size_t dot = param.name.find('.'); dot != std::string::npos;
         dot = param.name.find('.', dot + 1))
      scopes.insert(param.name.substr(0, dot));
  }
  // `name`, or `name_1`, `name_2`, ...: the first that is free (and, for an
  // entry, no parameter's scope).
  auto choose = [&](const std::string &name, bool namesScope) {
    auto clashes = [&](const std::string &symbol) {
      return taken.count(symbol) || (namesScope && scopes.count(symbol));
    };
    std::string symbol = name;
    for (unsigned suffix = 1; clashes(symbol); ++suffix)
      symbol = name + "_" + std::to_string(suffix);
    taken.insert(symbol);
    return symbol;
  };
  // The names the program shows first: entries and data sets keep theirs
  // unless a parameter has it; a block's function is renamed before them.
  ModuleSymbols symbols;
  for (const Entry &entry : program.entries)
    symbols.entries.push_back(choose(entry.name, /*namesScope=*/true));
  for (const DataSet &dataSet : program.dataSets)
    symbols.dataSets[dataSet.name] = choose(dataSet.name, false);
  for (const Function &fn : program.functions)
    symbols.functions.push_back(choose(fn.symbol, false));
  return symbols;
}

} // namespace modelc::mlirgen
