// PLACEHOLDER: being written (owned by the helper named in the session plan).
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace modelc {
#define GEN_PASS_DEF_MDLAUTODIFF
#include "passes/Passes.h.inc"
} // namespace modelc

namespace {
struct MdlAutodiffPass : modelc::impl::MdlAutodiffBase<MdlAutodiffPass> {
  void runOnOperation() override {
    getOperation().emitError("MdlAutodiff is not written yet");
    signalPassFailure();
  }
};
} // namespace
