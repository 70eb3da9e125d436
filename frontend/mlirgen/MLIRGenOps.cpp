// MLIRGen: the ops of a function or entry body. Each Program op becomes the
// mdl op of the same name; "call" becomes func.call.
#include "frontend/mlirgen/Emitter.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"

namespace modelc::mlirgen {

mlir::FailureOr<llvm::SmallVector<mlir::Type>>
Emitter::valueTypes(const Function &fn, const std::vector<int> &ids,
                    mlir::Location loc) {
  llvm::SmallVector<mlir::Type> types;
  for (int id : ids) {
    if (id < 0 || id >= static_cast<int>(fn.values.size()))
      return mlir::emitError(loc) << "internal error: value " << id << " of '"
                                  << fn.symbol << "' is out of range";
    types.push_back(tensorType(fn.values[id]));
  }
  return types;
}

mlir::FailureOr<llvm::SmallVector<mlir::Value>>
Emitter::lookupValues(const Function &fn, const std::vector<int> &ids,
                      const std::vector<mlir::Value> &values,
                      mlir::Location loc) {
  llvm::SmallVector<mlir::Value> result;
  for (int id : ids) {
    if (id < 0 || id >= static_cast<int>(values.size()) || !values[id])
      return mlir::emitError(loc)
             << "internal error: value " << id << " of '" << fn.symbol
             << "' is used before it is defined";
    result.push_back(values[id]);
  }
  return result;
}

mlir::Operation *Emitter::emitOp(mlir::OpBuilder &builder, const Function &fn,
                                 const Op &op, mlir::ValueRange operands,
                                 mlir::TypeRange resultTypes,
                                 mlir::Location loc) {
  if (op.name == "call") {
    const std::vector<Function> &functions = program.functions;
    if (op.callee < 0 || op.callee >= static_cast<int>(functions.size())) {
      mlir::emitError(loc) << "internal error: call in '" << fn.symbol
                           << "' to function #" << op.callee;
      return nullptr;
    }
    return builder.create<mlir::func::CallOp>(loc, symbols.functions[op.callee],
                                              resultTypes, operands);
  }

  mlir::OperationState state(loc, "mdl." + op.name);
  if (!state.name.isRegistered()) {
    mlir::emitError(loc) << "internal error: no op 'mdl." << op.name << "'";
    return nullptr;
  }
  state.addOperands(operands);
  state.addTypes(resultTypes);
  if (op.name == "constant") {
    auto type = resultTypes.size() == 1
                    ? llvm::dyn_cast<mlir::RankedTensorType>(resultTypes[0])
                    : mlir::RankedTensorType();
    mlir::DenseElementsAttr value =
        type ? constantValue(op, type, loc) : mlir::DenseElementsAttr();
    if (!value) {
      if (!type)
        mlir::emitError(loc) << "internal error: constant with "
                             << resultTypes.size() << " results";
      return nullptr;
    }
    state.addAttribute("value", value);
  } else if (mlir::failed(opAttributes(op, loc, state.attributes))) {
    return nullptr;
  }
  // Sema spells each attribute by hand; one the op does not declare would
  // otherwise be carried along unread while the op takes its default.
  llvm::ArrayRef<mlir::StringAttr> declared =
      state.name.getRegisteredInfo()->getAttributeNames();
  for (const mlir::NamedAttribute &attr : state.attributes)
    if (!llvm::is_contained(declared, attr.getName())) {
      mlir::emitError(loc) << "internal error: 'mdl." << op.name
                           << "' has no attribute '" << attr.getName().str()
                           << "'";
      return nullptr;
    }
  return builder.create(state);
}

mlir::LogicalResult Emitter::emitOps(mlir::OpBuilder &builder,
                                     const Function &fn,
                                     std::vector<mlir::Value> &values) {
  for (const Op &op : fn.ops) {
    mlir::Location opLoc = loc(op.loc);
    mlir::FailureOr<llvm::SmallVector<mlir::Value>> operands =
        lookupValues(fn, op.operands, values, opLoc);
    if (mlir::failed(operands))
      return mlir::failure();

    mlir::FailureOr<llvm::SmallVector<mlir::Type>> resultTypes =
        valueTypes(fn, op.results, opLoc);
    if (mlir::failed(resultTypes))
      return mlir::failure();

    mlir::Operation *created =
        emitOp(builder, fn, op, *operands, *resultTypes, opLoc);
    if (!created)
      return mlir::failure();
    if (created->getNumResults() != op.results.size())
      return mlir::emitError(opLoc)
             << "internal error: 'mdl." << op.name << "' has "
             << created->getNumResults() << " results, expected "
             << op.results.size();
    for (auto [id, result] : llvm::zip(op.results, created->getResults()))
      values[id] = result;
  }
  return mlir::success();
}

} // namespace modelc::mlirgen
