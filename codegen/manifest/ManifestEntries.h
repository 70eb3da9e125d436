// The manifest's train and infer entries, from the settings of the mdl.train
// and mdl.infer ops, and its GpuProgram (used by ManifestWriter.cpp).
#ifndef MODELC_CODEGEN_MANIFEST_MANIFESTENTRIES_H
#define MODELC_CODEGEN_MANIFEST_MANIFESTENTRIES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

#include "manifest_generated.h"

namespace modelc {

struct ValueCheck;

template <typename T>
using FlatTables =
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<T>>>;

/// The names the program gave its entries and data sets, by symbol
/// (MdlDialect::getUserName: a symbol differs from its name when a parameter
/// has the name). The manifest, its buffers and its functions use the names.
class UserNames {
public:
  explicit UserNames(mlir::ModuleOp module);
  /// The name of the entry or data set `symbol`; `symbol` itself otherwise.
  llvm::StringRef operator()(llvm::StringRef symbol) const;

private:
  llvm::StringMap<std::string> names;
};

/// One TrainEntry per mdl.train, in module order.
mlir::FailureOr<FlatTables<manifest::TrainEntry>>
writeTrainEntries(flatbuffers::FlatBufferBuilder &fbb, mlir::ModuleOp module,
                  const UserNames &names);

/// One InferEntry per mdl.infer, in module order.
mlir::FailureOr<FlatTables<manifest::InferEntry>>
writeInferEntries(flatbuffers::FlatBufferBuilder &fbb, mlir::ModuleOp module,
                  const UserNames &names);

/// Appends the ValueCheck tables of `checks` to `out`, each with `input`.
void appendValueChecks(
    flatbuffers::FlatBufferBuilder &fbb, const std::vector<ValueCheck> &checks,
    uint32_t input,
    std::vector<flatbuffers::Offset<manifest::ValueCheck>> &out);

/// The schema's dtype of a tensor element type; nullopt for one the runtime
/// cannot hold.
std::optional<manifest::DType> getDType(mlir::Type type);

/// The GpuProgram of the module attribute `mdl.gpu_program` that
/// --mdl-serialize-gpu sets (docs/codegen/gpu.md); `symbols` are the
/// function table's C symbols, which its step lists follow.
mlir::FailureOr<flatbuffers::Offset<manifest::GpuProgram>>
writeGpuProgram(flatbuffers::FlatBufferBuilder &fbb, mlir::ModuleOp module,
                llvm::ArrayRef<std::string> symbols);

} // namespace modelc

#endif // MODELC_CODEGEN_MANIFEST_MANIFESTENTRIES_H
