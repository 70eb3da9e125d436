// modelc-opt: runs registered passes on MLIR text, as mlir-opt does, with the
// modelc dialects and passes.
#include "tools/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  modelc::registerModelcDialects(registry);
  modelc::registerModelcPasses();
  // --mdl-serialize-gpu emits PTX with LLVM's NVPTX backend.
  modelc::initializeNvptxTarget();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "modelc optimizer driver\n", registry));
}
