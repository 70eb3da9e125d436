// The mdlrt dialect class (generated from MdlrtDialect.td).
#ifndef MODELC_DIALECTS_MDLRT_MDLRTDIALECT_H
#define MODELC_DIALECTS_MDLRT_MDLRTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/mdlrt/MdlrtDialect.h.inc"

#endif // MODELC_DIALECTS_MDLRT_MDLRTDIALECT_H
