// The file readers behind openFieldSource (internal to runtime/data): each
// loads a whole array, checks its dtype against the field's, and leaves the
// shape checks, which are the same for every format, to Source.cpp.
#pragma once

#include "runtime/data/Source.h"
#include "runtime/io/Files.h"

#include <optional>

namespace modelc::rt {

/// An array in memory or mapped: `shape[0]` samples of the remaining dims
/// (a 1-D token stream for raw files), starting `offset` bytes into `blob`.
struct LoadedArray {
  std::shared_ptr<const Blob> blob;
  size_t offset;
  std::vector<int64_t> shape;
};

/// The dtype check shared by the loaders: `found` is the file's type, or
/// nullopt when it is not one of ours; `foundName` spells it as the file
/// does ("<f4", "i8", ...).
Status checkFieldDType(const FieldSpec &spec, std::optional<DType> found,
                       const std::string &foundName);

/// MNIST idx files, optionally gzip-compressed (recognised by the gzip magic).
Result<LoadedArray> loadIdx(const FieldSpec &spec);
/// A .npy file, mapped.
Result<LoadedArray> loadNpy(const FieldSpec &spec);
/// One member of an .npz, decompressed into memory once (stored members
/// stay in the mapped archive); its dtype and per-sample shape are checked
/// before its data is inflated.
Result<LoadedArray> loadNpz(const FieldSpec &spec);
/// A raw little-endian array of the field's dtype, or an llm.c token shard
/// (recognised by its magic number), as a 1-D stream of elements.
Result<LoadedArray> loadRawFile(const FieldSpec &spec);

/// The same loaders on a file already in memory (`spec.path` names it in
/// messages and is not opened): the fuzz targets' entry points.
Result<LoadedArray> loadIdx(const FieldSpec &spec,
                            std::shared_ptr<const Blob> file);
Result<LoadedArray> loadNpy(const FieldSpec &spec,
                            std::shared_ptr<const Blob> file);
Result<LoadedArray> loadNpz(const FieldSpec &spec,
                            std::shared_ptr<const Blob> file);
Result<LoadedArray> loadRawFile(const FieldSpec &spec,
                                std::shared_ptr<const Blob> file);

} // namespace modelc::rt
