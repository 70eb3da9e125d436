// The dialects and passes of modelc, registered the same way by every tool.
#ifndef MODELC_TOOLS_REGISTRATION_H
#define MODELC_TOOLS_REGISTRATION_H

#include "dialects/mdl/MdlDialect.h"

#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace modelc {

/// The dialects modelc's IR uses. Deliberately not registerAllDialects: each
/// dialect costs compile time in every file that includes its headers.
inline void registerModelcDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::mdl::MdlDialect, mlir::func::FuncDialect>();
  // Lets the inliner inline func.call, e.g. the blocks MLIRGen emits as
  // functions into the entry points.
  mlir::func::registerInlinerExtension(registry);
}

/// The passes modelc-opt can run: a few upstream cleanups for now.
inline void registerModelcPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInlinerPass();
  mlir::registerSymbolDCEPass();
}

} // namespace modelc

#endif // MODELC_TOOLS_REGISTRATION_H
