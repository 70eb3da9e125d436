// The mdl dialect class (generated from MdlDialect.td).
#ifndef MODELC_DIALECTS_MDL_MDLDIALECT_H
#define MODELC_DIALECTS_MDL_MDLDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/mdl/MdlDialect.h.inc"

#endif // MODELC_DIALECTS_MDL_MDLDIALECT_H
