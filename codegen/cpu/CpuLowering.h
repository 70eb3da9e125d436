// The steps of --mdl-lower-to-cpu (LowerToCpu.cpp), each in its own file.
#ifndef MODELC_CODEGEN_CPU_CPULOWERING_H
#define MODELC_CODEGEN_CPU_CPULOWERING_H

#include "codegen/manifest/ManifestWriter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace modelc {

/// Replaces every mdlrt.gemm with a call of modelc_gemm_f32/f64
/// (runtime/include/modelc/ProgramABI.h), declared with LLVM pointer types
/// so that the call lowers to the C signature whatever the calling
/// convention for memrefs. Must run after expand-strided-metadata: that pass
/// folds `extract_aligned_pointer_as_index(memref.view)` to the view's
/// source in MLIR 19, dropping the view's byte shift.
void lowerGemmsToCalls(mlir::ModuleOp module);

/// Replaces every mdlrt.all_reduce with calls of the runtime's
/// modelc_all_reduce_add_<type> for each buffer of the bucket, then
/// modelc_all_reduce_bucket (ProgramABI.h). Runs where lowerGemmsToCalls
/// does, for the same reason.
void lowerAllReducesToCalls(mlir::ModuleOp module);

/// The address of `memref`'s first element as an LLVM pointer: its aligned
/// pointer moved by its offset (static, or read from its metadata).
mlir::Value createElementPointer(mlir::OpBuilder &builder, mlir::Location loc,
                                 mlir::Value memref);

/// The kernels of --mdl-outline-kernels (`mdl.kernel = index`) in index
/// order, each renamed `<C symbol of the program function that calls
/// it>_k<index>` along with its calls. Fails, with a diagnostic, unless the
/// indices are 0..n-1, each once.
mlir::FailureOr<llvm::SmallVector<mlir::func::FuncOp>>
collectKernels(mlir::ModuleOp module,
               llvm::ArrayRef<ProgramFunction> functions);

/// What every call of each kernel guarantees about its buffer arguments,
/// as LLVM argument attributes: `llvm.align`, the largest power of two up
/// to the arena's 64 that divides every offset passed for it, and
/// `llvm.noalias` when at every call its bytes overlap no other buffer
/// argument's. Call sites are the program functions' calls with constant
/// arena offsets (KernelArguments.h); a kernel without them gets nothing.
void addKernelArgumentPromises(mlir::ModuleOp module,
                               llvm::ArrayRef<ProgramFunction> functions,
                               llvm::ArrayRef<mlir::func::FuncOp> kernels);

/// The kernel table's entries: for each kernel, `<name>_entry`, a function
/// `void (uint8_t *arena, const uint64_t *args)` that passes the kernel
/// `arena + args[i]` for a buffer and `args[i]` for an i64 (the arguments a
/// GPU launch step records), so that a test runs kernel i on the CPU with
/// a step's arguments. Returns their names in index order.
llvm::SmallVector<std::string>
addKernelEntries(mlir::ModuleOp module,
                 llvm::ArrayRef<mlir::func::FuncOp> kernels,
                 mlir::MemRefType arenaType);

/// After the lowering to LLVM: gives the kernels internal linkage and
/// `noinline`, so that LLVM keeps them apart.
void markKernelsInternal(mlir::ModuleOp module,
                         llvm::ArrayRef<std::string> names);

/// The first half of the upstream lowering: linalg to loops and views to
/// explicit offsets (expand-strided-metadata).
void buildLinalgToLoopsPipeline(mlir::OpPassManager &pm);

/// The second half: every dialect to LLVM, program functions with the bare
/// pointer convention (`void f(uint8_t *arena)`).
void buildLoopsToLLVMPipeline(mlir::OpPassManager &pm);

/// Adds the ABI's globals to a module in the LLVM dialect: the function
/// table `modelc_functions` (`functions` in order), `modelc_num_functions`,
/// the kernel table `modelc_cpu_kernels` (`kernels`, the names of their
/// entries in index order), `modelc_num_cpu_kernels`, `modelc_manifest` (the
/// bytes of `manifest`) and `modelc_manifest_size`.
void addProgramGlobals(mlir::ModuleOp module,
                       llvm::ArrayRef<ProgramFunction> functions,
                       llvm::ArrayRef<std::string> kernels,
                       llvm::StringRef manifest);

} // namespace modelc

#endif // MODELC_CODEGEN_CPU_CPULOWERING_H
