// PLACEHOLDER: being written (owned by the helper named in the session plan).
#include "codegen/Passes.h"

#include "dialects/mdlrt/MdlrtDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace modelc {
#define GEN_PASS_DEF_MDLLOWERTOLINALG
#include "codegen/Passes.h.inc"
} // namespace modelc

namespace {
struct MdlLowerToLinalgPass : modelc::impl::MdlLowerToLinalgBase<MdlLowerToLinalgPass> {
  void runOnOperation() override {
    getOperation().emitError("MdlLowerToLinalg is not written yet");
    signalPassFailure();
  }
};
} // namespace
