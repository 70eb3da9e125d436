// The operations of the mdl dialect (generated from MdlOps.td).
#ifndef MODELC_DIALECTS_MDL_MDLOPS_H
#define MODELC_DIALECTS_MDL_MDLOPS_H

#include "dialects/mdl/MdlDialect.h"
#include "dialects/mdl/MdlTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/mdl/MdlEnums.h.inc"
#include "dialects/mdl/MdlInterfaces.h.inc"

namespace mlir::mdl {

// Verifiers shared by op families; the generated op classes call them.

/// Operands broadcast (NumPy) to the result shape.
LogicalResult verifyBroadcastingOp(Operation *op);
/// A reduction of operand 0 over `axes` gives result 0.
LogicalResult verifyReduceOp(Operation *op, ArrayRef<int64_t> axes,
                             bool keepdim);
/// `axis` names an axis of a rank-`rank` operand.
LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank);
/// 2-D pooling of operand 0 gives result 0.
LogicalResult verifyPool2dOp(Operation *op, ArrayRef<int64_t> kernel,
                             ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> padding);
/// `actual` is a tensor of `shape` and `elementType`; `what` names it.
LogicalResult verifyTensorType(Operation *op, StringRef what, Type actual,
                               ArrayRef<int64_t> shape, Type elementType);

/// The operands and results of mdl.lstm_scan and its gradient: `sequence`
/// is `[b, t, 4h]` and `weightHh` `[4h, h]` in f32 or f64, every value of
/// `states` is `[b, h]` and every one of `steps` `[b, t + 1, h]`, all of
/// one element type.
LogicalResult
verifyLstmShapes(Operation *op, Value sequence, Value weightHh,
                 ArrayRef<std::pair<StringRef, Value>> sequences,
                 ArrayRef<std::pair<StringRef, Value>> states,
                 ArrayRef<std::pair<StringRef, Value>> steps);

} // namespace mlir::mdl

#define GET_OP_CLASSES
#include "dialects/mdl/MdlOps.h.inc"

#endif // MODELC_DIALECTS_MDL_MDLOPS_H
