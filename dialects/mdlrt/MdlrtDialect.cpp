// The mdlrt dialect: registration (the ops are in MdlrtOps.cpp).
#include "dialects/mdlrt/MdlrtDialect.h"
#include "dialects/mdlrt/MdlrtOps.h"

using namespace mlir;
using namespace mlir::mdlrt;

#include "dialects/mdlrt/MdlrtDialect.cpp.inc"

void MdlrtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/mdlrt/MdlrtOps.cpp.inc"
      >();
}
