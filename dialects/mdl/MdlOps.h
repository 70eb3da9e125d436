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

/// The operands and results of the recurrent scans (mdl.lstm_scan with
/// `gates` = 4, mdl.gru_scan with 3) and their gradients: `sequence` is
/// `[b, t, gates h]` and `weightHh` `[gates h, h]` in f32 or f64; every
/// value of `sequences` has `sequence`'s shape, of `units` `[b, t, h]`, of
/// `states` `[b, h]`, of `steps` `[b, t + 1, h]` and of `vectors`
/// `[gates h]`, all of one element type.
struct RecurrentShapes {
  ArrayRef<std::pair<StringRef, Value>> sequences, units, states, steps,
      vectors;
};
LogicalResult verifyRecurrentShapes(Operation *op, int64_t gates,
                                    Value sequence, Value weightHh,
                                    const RecurrentShapes &values);

} // namespace mlir::mdl

#define GET_OP_CLASSES
#include "dialects/mdl/MdlOps.h.inc"

#endif // MODELC_DIALECTS_MDL_MDLOPS_H
