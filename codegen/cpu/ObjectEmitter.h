// The LLVM half of the CPU backend: the LLVM-dialect module to optimised
// LLVM IR for the host, and that IR to an object file.
#ifndef MODELC_CODEGEN_CPU_OBJECTEMITTER_H
#define MODELC_CODEGEN_CPU_OBJECTEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace modelc {

/// The machine code is for.
struct CpuTargetOptions {
  /// An LLVM CPU name (`x86-64`, `x86-64-v3`, `skylake`, ...); empty or
  /// `native`: the CPU modelc runs on, with all its features.
  std::string cpu;
  /// LLVM feature list (`+avx2,+fma`), added to the CPU's.
  std::string features;
  /// LLVM's optimisation level, 0 to 3.
  unsigned optLevel = 3;
};

/// Translates `module` (LLVM dialect only) to LLVM IR for the host's triple
/// and the data layout of `options`' CPU, then runs LLVM's default module
/// pipeline at `options.optLevel` (so loops vectorise).
llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimize(mlir::ModuleOp module, llvm::LLVMContext &context,
                     const CpuTargetOptions &options);

/// Writes `module` (from translateAndOptimize with the same options) as a
/// relocatable, position-independent object file.
llvm::Error emitObjectFile(llvm::Module &module,
                           const CpuTargetOptions &options,
                           llvm::raw_pwrite_stream &os);

} // namespace modelc

#endif // MODELC_CODEGEN_CPU_OBJECTEMITTER_H
