// Linking a program: the object file in a private temporary directory, the
// C++ driver run on it with the runtime archives and their libraries.
#include "codegen/Link.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace modelc {

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The system libraries the runtime archives need (runtime/CMakeLists.txt),
/// linked statically where Debian ships an archive, so that a program runs
/// on a machine with nothing but glibc (a rented GPU machine with another
/// distribution, say): the Fortran runtime OpenBLAS uses, zlib, the C++
/// runtime; fmt is header-only in the runtime. OpenBLAS itself is the
/// runtime directory's libmodelc_openblas.a. CUDA libraries are dlopen'ed
/// at run time (docs/runtime/cuda.md).
constexpr llvm::StringLiteral kSystemLibraries[] = {
    "-l:libgfortran.a", "-l:libquadmath.a", "-l:libz.a", "-static-libstdc++",
    "-static-libgcc",   "-lpthread",        "-ldl",      "-lm"};

/// compiler-rt's builtins archive, found when modelc was built
/// (codegen/CMakeLists.txt), for the helpers LLVM calls that the C++
/// driver's libgcc may lack (__truncsfbf2 in Debian 12's GCC 12); none
/// when it is not there.
std::optional<llvm::StringRef> compilerRtBuiltins() {
#ifdef MODELC_COMPILER_RT_BUILTINS
  llvm::StringRef path = MODELC_COMPILER_RT_BUILTINS;
  if (llvm::sys::fs::is_regular_file(path))
    return path;
#endif
  return std::nullopt;
}

/// What the linker wrote, for the error message: the whole of it when short.
std::string readLog(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> log =
      llvm::MemoryBuffer::getFile(path);
  if (!log)
    return "";
  llvm::StringRef text = (*log)->getBuffer().rtrim();
  constexpr size_t kMaxLog = 4000;
  if (text.size() > kMaxLog)
    return text.take_front(kMaxLog).str() + "\n...";
  return text.str();
}

/// The fastest linker at hand for the driver: lld (about 5x faster than
/// GNU ld on a program's 28 MB of static archives), then gold, else the
/// driver's own; bench/link_time.py measures them side by side.
std::optional<llvm::StringRef> fastLinkerFlag() {
  if (llvm::sys::findProgramByName("ld.lld"))
    return llvm::StringRef("-fuse-ld=lld");
  if (llvm::sys::findProgramByName("ld.gold"))
    return llvm::StringRef("-fuse-ld=gold");
  return std::nullopt;
}

/// `-Wl,--defsym=gotoblas_CORE=gotoblas_KEPT` for each CPU generation whose
/// OpenBLAS kernels libmodelc_openblas.a leaves out
/// (runtime/cpu/OpenBlasCores.cmake): OpenBLAS runs the kept generation's
/// kernels on such a CPU.
std::vector<std::string> openBlasCoreAliases() {
  std::vector<std::string> flags;
#ifdef MODELC_OPENBLAS_CORE_ALIASES
  llvm::SmallVector<llvm::StringRef> aliases;
  llvm::StringRef(MODELC_OPENBLAS_CORE_ALIASES).split(aliases, ',');
  for (llvm::StringRef alias : aliases) {
    auto [core, kept] = alias.split('=');
    flags.push_back(
        ("-Wl,--defsym=gotoblas_" + core + "=gotoblas_" + kept).str());
  }
#endif
  return flags;
}

} // namespace

llvm::Error linkExecutable(llvm::ArrayRef<std::string> objects,
                           llvm::StringRef output, const LinkOptions &options) {
  llvm::SmallVector<std::string> archives;
  for (llvm::StringRef name :
       {"libmodelc_rt_main.a", "libmodelc_rt.a", "libmodelc_openblas.a"}) {
    llvm::SmallString<256> path(options.runtimeDir);
    llvm::sys::path::append(path, name);
    if (!llvm::sys::fs::is_regular_file(path))
      return makeError("the runtime library '" + path +
                       "' is missing (build the modelc_rt, modelc_rt_main "
                       "and modelc_openblas targets, or pass --runtime-dir)");
    archives.push_back(path.str().str());
  }
  llvm::ErrorOr<std::string> driver =
      llvm::sys::path::has_parent_path(options.driver)
          ? llvm::ErrorOr<std::string>(options.driver)
          : llvm::sys::findProgramByName(options.driver);
  if (!driver)
    return makeError("cannot find the linker driver '" + options.driver +
                     "' in PATH");

  llvm::SmallString<256> tempDir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("modelc-link", tempDir))
    return makeError("cannot create a temporary directory: " + ec.message());
  auto removeTempDir = llvm::make_scope_exit(
      [&] { llvm::sys::fs::remove_directories(tempDir); });
  llvm::SmallString<256> logPath(tempDir);
  llvm::sys::path::append(logPath, "link.log");
  std::vector<std::string> objectPaths;
  for (auto [index, object] : llvm::enumerate(objects)) {
    llvm::SmallString<256> objectPath(tempDir);
    llvm::sys::path::append(objectPath,
                            "program" + std::to_string(index) + ".o");
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (!ec)
      os << object;
    if (ec || os.has_error())
      return makeError("cannot write '" + objectPath + "'");
    objectPaths.push_back(objectPath.str().str());
  }

  llvm::SmallVector<llvm::StringRef> args = {*driver};
  args.append(objectPaths.begin(), objectPaths.end());
  args.append({"-o", output});
  args.append(archives.begin(), archives.end());
  args.append(std::begin(kSystemLibraries), std::end(kSystemLibraries));
  std::vector<std::string> aliases = openBlasCoreAliases();
  args.append(aliases.begin(), aliases.end());
  if (std::optional<llvm::StringRef> builtins = compilerRtBuiltins())
    args.push_back(*builtins);
  std::string chosen = "-fuse-ld=" + options.linker;
  std::optional<llvm::StringRef> linker =
      options.linker.empty() ? fastLinkerFlag()
                             : std::optional<llvm::StringRef>(chosen);
  if (linker)
    args.push_back(*linker);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, redirects,
                                         0, 0, &error);
  if (status != 0) {
    std::string log = readLog(logPath);
    return makeError(
        "linking '" + output + "' failed (" + *driver +
        (status < 0 ? ": " + error : " exited with " + std::to_string(status)) +
        ")" + (log.empty() ? "" : ":\n" + log));
  }
  return llvm::Error::success();
}

} // namespace modelc
