// The operations of the mdlrt dialect (generated from MdlrtOps.td).
#ifndef MODELC_DIALECTS_MDLRT_MDLRTOPS_H
#define MODELC_DIALECTS_MDLRT_MDLRTOPS_H

#include "dialects/mdlrt/MdlrtDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/mdlrt/MdlrtOps.h.inc"

#endif // MODELC_DIALECTS_MDLRT_MDLRTOPS_H
