// The CUDA toolkit's compile-time pieces that --mdl-serialize-gpu uses
// when they are installed: ptxas and libdevice.
#ifndef MODELC_CODEGEN_GPU_PTXAS_H
#define MODELC_CODEGEN_GPU_PTXAS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace modelc {

/// ptxas for `setting`: "auto" searches PATH, then /usr/local/cuda/bin;
/// "none" and a failed search give ""; anything else is the path itself.
std::string findPtxas(llvm::StringRef setting);

/// The CUDA toolkit root with nvvm/libdevice/libdevice.10.bc: $CUDA_HOME,
/// $CUDA_PATH, $CUDA_ROOT, the one `ptxas` is in, /usr/local/cuda; "" when
/// none has it.
std::string findCudaToolkit(llvm::StringRef ptxas);

/// `ptxas -arch=ARCH` on `ptx`: the cubin; nullopt when this ptxas does not
/// know the architecture; an error with ptxas's output when it fails.
llvm::Expected<std::optional<std::string>>
runPtxas(llvm::StringRef ptxas, llvm::StringRef arch, llvm::StringRef ptx);

} // namespace modelc

#endif // MODELC_CODEGEN_GPU_PTXAS_H
