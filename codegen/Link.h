// The last step of `modelc -o OUT`: the program's object file and the
// runtime libraries linked into an executable by the system's C++ driver.
#ifndef MODELC_CODEGEN_LINK_H
#define MODELC_CODEGEN_LINK_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace modelc {

struct LinkOptions {
  /// Where libmodelc_rt.a and libmodelc_rt_main.a are.
  std::string runtimeDir;
  /// The driver that links: a name looked up in PATH, or a path.
  std::string driver = "c++";
  /// The driver's linker (`-fuse-ld=NAME`: lld, gold, bfd); empty for the
  /// fastest found: lld, then gold, else the driver's default.
  std::string linker;
};

/// Links `objects` (the bytes of object files: the program's parts) with
/// the runtime into the executable `output`:
///   c++ OBJ... -o OUT DIR/libmodelc_rt_main.a DIR/libmodelc_rt.a
///       (static OpenBLAS, libgfortran, zlib, C++ runtime)
///       [compiler-rt builtins] -fuse-ld=...
/// The objects live in a private temporary directory, removed afterwards.
/// A missing runtime library, a missing driver or a failing link is one
/// error whose message includes what the linker said.
llvm::Error linkExecutable(llvm::ArrayRef<std::string> objects,
                           llvm::StringRef output, const LinkOptions &options);

} // namespace modelc

#endif // MODELC_CODEGEN_LINK_H
