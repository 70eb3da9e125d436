// The LLVM half of the CPU backend: the LLVM-dialect module to optimised
// LLVM IR for the host, and that IR to object files, in parts compiled in
// parallel.
#ifndef MODELC_CODEGEN_CPU_OBJECTEMITTER_H
#define MODELC_CODEGEN_CPU_OBJECTEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
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

/// Functions per part when the part count is chosen: parts are optimised
/// and compiled on their own threads, and each costs a target machine and
/// a round trip through bitcode.
inline constexpr size_t kFunctionsPerPart = 128;
/// At most this many parts.
inline constexpr size_t kMaxObjectParts = 16;

/// The object files of `module` (LLVM dialect only): translated to LLVM IR,
/// split into `parts` modules by LLVM's SplitModule (0: one per
/// kFunctionsPerPart defined functions, at most kMaxObjectParts; the
/// kernels' internal symbols become hidden external ones), each optimised
/// (translateAndOptimize's pipeline) and compiled in its own LLVMContext,
/// in parallel on the threads of `module`'s context (modelc -j). The parts
/// depend on the program alone, not on the threads. Each phase reports
/// under `timing`.
llvm::Expected<std::vector<std::string>>
emitObjectFiles(mlir::ModuleOp module, const CpuTargetOptions &options,
                unsigned parts, mlir::TimingScope &timing);

} // namespace modelc

#endif // MODELC_CODEGEN_CPU_OBJECTEMITTER_H
