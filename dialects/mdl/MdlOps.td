// All operations of the mdl dialect, one .td file per family.
#ifndef MODELC_DIALECTS_MDL_MDLOPS_TD
#define MODELC_DIALECTS_MDL_MDLOPS_TD

include "MdlDialect.td"
include "MdlEnums.td"
include "MdlInterfaces.td"
include "EntryOps.td"
include "ElementwiseOps.td"
include "ReductionOps.td"
include "ShapeOps.td"
include "NNOps.td"
include "BufferOps.td"
include "GradOps.td"

#endif // MODELC_DIALECTS_MDL_MDLOPS_TD
