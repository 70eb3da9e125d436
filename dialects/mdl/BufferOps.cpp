// Verifiers of the buffer ops: buffer declarations, flat views, loads,
// stores, the all-reduce of gradient buckets and the dropout mask.
#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

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

/// The type of the buffer or parameter `name` names (or, when `views`, of a
/// flat view), or null after an error.
static Type lookupStorageType(Operation *user, FlatSymbolRefAttr name,
                              SymbolTableCollection &symbolTable,
                              bool views = true) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(user, name);
  if (auto buffer = dyn_cast_or_null<BufferOp>(symbol))
    return buffer.getType();
  if (auto param = dyn_cast_or_null<ParamOp>(symbol))
    return param.getType();
  if (auto view = dyn_cast_or_null<FlatViewOp>(symbol); view && views)
    return view.getType();
  user->emitOpError() << name << " does not name an mdl.buffer or mdl.param"
                      << (views ? " or mdl.flat_view" : "");
  return {};
}

SmallVector<int64_t> FlatViewOp::layout(ArrayRef<RankedTensorType> members) {
  SmallVector<int64_t> offsets;
  uint64_t bytes = 0;
  for (RankedTensorType member : members) {
    uint64_t width = member.getElementTypeBitWidth() / 8;
    bytes = llvm::alignTo(bytes, kMemberAlignment);
    offsets.push_back(int64_t(bytes / width));
    bytes += uint64_t(member.getNumElements()) * width;
  }
  // The view ends where the last member does.
  uint64_t width =
      members.empty() ? 1 : members.front().getElementTypeBitWidth() / 8;
  offsets.push_back(int64_t(bytes / width));
  return offsets;
}

LogicalResult FlatViewOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  RankedTensorType type = getType();
  if (type.getRank() != 1)
    return emitOpError("a flat view is a 1-d tensor, got ") << type;
  if (getMembers().empty())
    return emitOpError("needs at least one member");
  SmallVector<RankedTensorType> members;
  llvm::SmallDenseSet<Attribute> seen;
  for (Attribute attr : getMembers()) {
    auto name = cast<FlatSymbolRefAttr>(attr);
    auto member = dyn_cast_or_null<RankedTensorType>(
        lookupStorageType(*this, name, symbolTable, /*views=*/false));
    if (!member)
      return failure();
    if (member.getElementType() != type.getElementType())
      return emitOpError() << name << " holds " << member.getElementType()
                           << ", not " << type.getElementType();
    if (!member.hasStaticShape())
      return emitOpError() << name << " has no static shape";
    if (!seen.insert(name).second)
      return emitOpError() << name << " is a member twice";
    members.push_back(member);
  }
  int64_t elements = layout(members).back();
  if (type.getDimSize(0) != elements)
    return emitOpError("the members laid out take ")
           << elements << " elements, not " << type.getDimSize(0);
  return success();
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
