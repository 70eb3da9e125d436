// Verifiers of the buffer ops: buffer declarations, loads, stores, the
// all-reduce of gradient buckets and the dropout mask.
#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::mdl;

LogicalResult BufferOp::verify() {
  bool knownRole = llvm::StringSwitch<bool>(getRole())
                       .Cases("grad", "state", "input", "output", "hyper", "window", true)
                       .Default(false);
  if (!knownRole)
    return emitOpError("role must be grad, state, input, output or hyper, got '")
           << getRole() << "'";
  bool knownPhase = llvm::StringSwitch<bool>(getPhase())
                        .Cases("shared", "train", "eval", "infer", true)
                        .Default(false);
  if (!knownPhase)
    return emitOpError("phase must be shared, train, eval or infer, got '")
           << getPhase() << "'";
  if (getRole() == "hyper" &&
      getType() != RankedTensorType::get({}, Float64Type::get(getContext())))
    return emitOpError("a hyper buffer must be tensor<f64>");
  return success();
}

/// The type of the buffer or parameter `name` names, or null after an error.
static Type lookupStorageType(Operation *user, FlatSymbolRefAttr name,
                              SymbolTableCollection &symbolTable) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(user, name);
  if (auto buffer = dyn_cast_or_null<BufferOp>(symbol))
    return buffer.getType();
  if (auto param = dyn_cast_or_null<ParamOp>(symbol))
    return param.getType();
  user->emitOpError() << name << " does not name an mdl.buffer or mdl.param";
  return {};
}

LogicalResult LoadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Type type = lookupStorageType(*this, getNameAttr(), symbolTable);
  if (!type)
    return failure();
  if (type != getType())
    return emitOpError("type ") << getType() << " does not match " << type
                                << " of " << getNameAttr();
  return success();
}

LogicalResult StoreOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Type type = lookupStorageType(*this, getNameAttr(), symbolTable);
  if (!type)
    return failure();
  if (type != getValue().getType())
    return emitOpError("type ") << getValue().getType() << " does not match "
                                << type << " of " << getNameAttr();
  return success();
}

LogicalResult
AllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (getNames().empty())
    return emitOpError("needs at least one buffer");
  Type elementType;
  for (Attribute attr : getNames()) {
    auto name = cast<FlatSymbolRefAttr>(attr);
    auto buffer = symbolTable.lookupNearestSymbolFrom<BufferOp>(*this, name);
    if (!buffer || buffer.getRole() != "grad")
      return emitOpError() << name << " does not name a grad mdl.buffer";
    Type type = getElementTypeOrSelf(buffer.getType());
    // Gradients are f32 or f64 at every precision (the f32 master
    // gradients of mixed precision).
    if (!type.isF32() && !type.isF64())
      return emitOpError() << name << " holds " << type
                           << ", not f32 or f64";
    if (elementType && type != elementType)
      return emitOpError() << "the buffers of a bucket have one element type; "
                           << name << " holds " << type << ", not "
                           << elementType;
    elementType = type;
  }
  return success();
}

LogicalResult DropoutMaskOp::verify() {
  for (Value operand : {getSeed(), getCounter()})
    if (cast<RankedTensorType>(operand.getType()).getRank() != 0)
      return emitOpError("seed and counter must be 0-d tensors");
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError("p must be in [0, 1), got ") << p;
  return success();
}
