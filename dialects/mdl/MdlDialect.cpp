// The mdl dialect: registration, inlining, constants, argument attributes.
#include "dialects/mdl/MdlDialect.h"
#include "dialects/mdl/MdlOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace mlir::mdl;

#include "dialects/mdl/MdlDialect.cpp.inc"
#include "dialects/mdl/MdlEnums.cpp.inc"
#include "dialects/mdl/MdlInterfaces.cpp.inc"

namespace {
/// Every mdl op may be inlined: none of them depends on the function it is
/// in. This lets the upstream inliner specialise the blocks that MLIRGen
/// emits as functions into the entry points.
struct MdlInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void MdlDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/mdl/MdlOps.cpp.inc"
      >();
  addInterfaces<MdlInlinerInterface>();
}

Operation *MdlDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}

// `mdl.param = "fc1.weight"` marks a function argument that receives a
// parameter; the string is its path relative to the function's scope.
LogicalResult MdlDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attribute) {
  if (attribute.getName() != getParamArgAttrName())
    return op->emitError() << "unknown mdl argument attribute '"
                           << attribute.getName().getValue() << "'";
  if (!isa<FunctionOpInterface>(op))
    return op->emitError() << "'" << getParamArgAttrName()
                           << "' is only valid on function arguments";
  auto path = dyn_cast<StringAttr>(attribute.getValue());
  if (!path || path.getValue().empty())
    return op->emitError() << "'" << getParamArgAttrName() << "' on argument #"
                           << argIndex
                           << " must be a non-empty string naming a parameter";
  return success();
}

llvm::StringRef MdlDialect::getUserName(Operation *op) {
  if (auto name = op->getAttrOfType<StringAttr>(getUserNameAttrName()))
    return name.getValue();
  return SymbolTable::getSymbolName(op).getValue();
}
