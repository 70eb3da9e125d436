// MLIRGen's shared state (private to frontend/mlirgen): the mapping of .mdl
// types, locations and attribute values to MLIR, and the emission of one
// Function's ops.
#pragma once

#include "frontend/Program.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>
#include <vector>

namespace modelc::mlirgen {

/// The symbols of the program's functions (by index), entries (by index) and
/// data sets (by name), none equal to a parameter's name
/// (MLIRGenSymbols.cpp). An entry or a data set whose symbol is not its name
/// keeps the name in `mdl.name`.
struct ModuleSymbols {
  std::vector<std::string> functions;
  std::vector<std::string> entries;
  std::map<std::string, std::string> dataSets;
};
ModuleSymbols chooseModuleSymbols(const Program &program);

class Emitter {
public:
  Emitter(const Program &program, const SourceManager &sm,
          mlir::MLIRContext &context)
      : program(program), symbols(chooseModuleSymbols(program)), sm(sm),
        context(context) {}

  const Program &getProgram() const { return program; }
  const ModuleSymbols &getSymbols() const { return symbols; }
  mlir::MLIRContext &getContext() { return context; }

  /// A FileLineColLoc for a valid location, else UnknownLoc.
  mlir::Location loc(SourceLoc sourceLoc);
  mlir::Type elementType(DType dtype);
  mlir::RankedTensorType tensorType(const TensorType &type);

  /// A settings value: int64 → i64, double → f64, bool → BoolAttr, string,
  /// int/float lists → dense arrays, dictionaries → DictionaryAttr.
  mlir::Attribute settingAttr(const Attr &value);
  mlir::DictionaryAttr settingsDict(const AttrDict &dict);

  /// Appends the mdl attributes of Program op `op` to `attrs`: as settings,
  /// except that flags are unit attributes (present when true) and a few
  /// attributes have dedicated kinds (predicate enum, param_ref symbol).
  mlir::LogicalResult opAttributes(const Op &op, mlir::Location loc,
                                   mlir::NamedAttrList &attrs);
  /// The `value` of an mdl.constant: a splat ("value") or dense ("values")
  /// elements attribute of `type`; null after reporting an error.
  mlir::DenseElementsAttr
  constantValue(const Op &op, mlir::RankedTensorType type, mlir::Location loc);

  /// Emits `fn`'s ops at the builder's insertion point. `values` has one slot
  /// per value id of `fn`, the arguments already filled in; the results of
  /// each op are stored as it is emitted.
  mlir::LogicalResult emitOps(mlir::OpBuilder &builder, const Function &fn,
                              std::vector<mlir::Value> &values);
  /// The tensor types of value ids `ids` of `fn`, reporting ids that are out
  /// of range (a malformed Program).
  mlir::FailureOr<llvm::SmallVector<mlir::Type>>
  valueTypes(const Function &fn, const std::vector<int> &ids,
             mlir::Location loc);
  /// The values of `ids`, reporting ids that are out of range or not yet
  /// defined (a malformed Program).
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  lookupValues(const Function &fn, const std::vector<int> &ids,
               const std::vector<mlir::Value> &values, mlir::Location loc);

private:
  mlir::Operation *emitOp(mlir::OpBuilder &builder, const Function &fn,
                          const Op &op, mlir::ValueRange operands,
                          mlir::TypeRange resultTypes, mlir::Location loc);

  const Program &program;
  const ModuleSymbols symbols;
  const SourceManager &sm;
  mlir::MLIRContext &context;
  llvm::DenseMap<int, mlir::StringAttr> fileNames;
};

} // namespace modelc::mlirgen
