// The CUDA toolkit at compile time, when there is one: ptxas turns each PTX
// image into a cubin, and libdevice (nvvm/libdevice/libdevice.10.bc) gives
// the NVVM serialisation exp, tanh, erf and the other math functions.
#include "codegen/gpu/Ptxas.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace modelc {

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

constexpr llvm::StringLiteral kDefaultCudaRoot = "/usr/local/cuda";

/// Removes a directory and what is in it when it goes out of scope.
struct TempDir {
  llvm::SmallString<128> path;
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
};

llvm::Expected<std::string> readFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read '" + path +
                     "': " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

} // namespace

std::string findPtxas(llvm::StringRef setting) {
  if (setting == "none")
    return "";
  if (setting != "auto")
    return setting.str();
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  llvm::SmallString<128> fallback(kDefaultCudaRoot);
  llvm::sys::path::append(fallback, "bin", "ptxas");
  return llvm::sys::fs::can_execute(fallback) ? fallback.str().str() : "";
}

std::string findCudaToolkit(llvm::StringRef ptxas) {
  llvm::SmallVector<std::string> candidates;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (std::optional<std::string> value = llvm::sys::Process::GetEnv(variable))
      candidates.push_back(*value);
  // ptxas lives in <toolkit>/bin.
  if (!ptxas.empty())
    candidates.push_back(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(ptxas))
            .str());
  candidates.push_back(kDefaultCudaRoot.str());
  for (const std::string &root : candidates) {
    llvm::SmallString<128> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (!root.empty() && llvm::sys::fs::exists(libdevice))
      return root;
  }
  return "";
}

llvm::Expected<std::optional<std::string>>
runPtxas(llvm::StringRef ptxas, llvm::StringRef arch, llvm::StringRef ptx) {
  TempDir dir;
  if (std::error_code error =
          llvm::sys::fs::createUniqueDirectory("modelc-ptxas", dir.path))
    return makeError("cannot create a temporary directory: " + error.message());
  auto inDir = [&](llvm::StringRef name) {
    llvm::SmallString<128> path(dir.path);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  std::string input = inDir("kernels.ptx"), output = inDir("kernels.cubin"),
              log = inDir("ptxas.log");
  {
    std::error_code error;
    llvm::raw_fd_ostream file(input, error);
    if (error)
      return makeError("cannot write '" + input + "': " + error.message());
    file << ptx;
  }
  std::string archFlag = "-arch=" + arch.str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, archFlag, "-o", output,
                                             input};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         0, 0, &message);
  if (status != 0) {
    llvm::Expected<std::string> output = readFile(log);
    std::string text = output ? *output : llvm::toString(output.takeError());
    // A ptxas too new for an old architecture (CUDA 13 dropped sm_5x to
    // sm_7x): PTX only, which the driver can still JIT.
    if (llvm::StringRef(text).contains("is not defined for option 'gpu-name'"))
      return std::nullopt;
    return makeError("ptxas " + archFlag +
                     " failed (a modelc bug: please "
                     "report it)" +
                     (message.empty() ? "" : ": " + message) + "\n" + text);
  }
  llvm::Expected<std::string> cubin = readFile(output);
  if (!cubin)
    return cubin.takeError();
  return std::optional<std::string>(std::move(*cubin));
}

} // namespace modelc
