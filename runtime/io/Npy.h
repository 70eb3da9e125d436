// NumPy's .npy and .npz formats (numpy/lib/format.py): little-endian,
// C-order arrays of the runtime's dtypes; header versions 1.0, 2.0 and 3.0.
// npz archives are zip files of .npy members, stored or deflated (no zip64).
#pragma once

#include "runtime/io/DType.h"
#include "runtime/io/Files.h"
#include "runtime/support/Status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace modelc::rt {

/// Headers longer than this are refused (numpy itself refuses more than
/// 10000 bytes by default).
inline constexpr uint32_t kMaxNpyHeaderBytes = 1 << 20;

/// An array read from a file; `bytes` is little-endian, row-major.
struct NpyArray {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// An array to write; `data` holds shape × dtype size bytes.
struct NpyArrayView {
  DType dtype;
  std::vector<int64_t> shape;
  const void *data;
};

/// A parsed header: the array's data is `dataBytes` bytes at `dataOffset`,
/// which parseNpyHeader has checked to end exactly at the end of the input.
struct NpyHeader {
  DType dtype;
  std::string descr; // as written in the file, e.g. "<f4"
  std::vector<int64_t> shape;
  size_t dataOffset;
  uint64_t dataBytes;
};

/// Parses and checks the header of a .npy held in memory. Errors start with
/// `nameForErrors` and give byte offsets in the file.
Result<NpyHeader> parseNpyHeader(const uint8_t *data, size_t size,
                                 const std::string &nameForErrors);

/// parseNpyHeader when only the first `size` bytes of a `totalSize`-byte
/// .npy are at hand (an npz member, before its data is inflated): they must
/// hold the whole header, and its shape must need exactly the rest.
Result<NpyHeader> parseNpyHeaderPrefix(const uint8_t *data, size_t size,
                                       uint64_t totalSize,
                                       const std::string &nameForErrors);

/// Parses a whole .npy held in memory.
Result<NpyArray> parseNpy(const uint8_t *data, size_t size,
                          const std::string &nameForErrors);

Result<NpyArray> readNpy(const std::string &path);

/// Reads member `key` of an .npz: the member "KEY.npy", or "KEY" itself.
/// Its data is read once, straight into the result.
Result<NpyArray> readNpzMember(const std::string &path, const std::string &key);

/// One member of an .npz: its header, and its `header.dataBytes` bytes of
/// data at `offset` in `blob`: in the archive itself for a stored member,
/// else inflated once into memory of its own.
struct NpzArray {
  NpyHeader header;
  std::shared_ptr<const Blob> blob;
  size_t offset;
};

/// Called with a member's header before any of its data is inflated (the
/// data loader compares dtype and shape with its field's), so that nothing
/// is allocated for a member that cannot be right; an error stops the read.
/// `member` is "ARCHIVE[MEMBER]", for its messages.
using NpyHeaderCheck =
    std::function<Status(const NpyHeader &, const std::string &member)>;

/// Member `key` of the .npz held in `archive`; errors start with `name` (and
/// the member's name). Only the member's header is inflated before `check`;
/// its data is inflated once, into memory allocated once for the size the
/// header and the archive agree on, never past it.
Result<NpzArray> readNpzArray(std::shared_ptr<const Blob> archive,
                              const std::string &name, const std::string &key,
                              const NpyHeaderCheck &check = nullptr);

/// The keys of an .npz's members as readNpzMember takes them ("KEY.npy" as
/// "KEY"), in the archive's order.
Result<std::vector<std::string>> listNpzKeys(const uint8_t *data, size_t size,
                                             const std::string &name);

/// The numpy dtype string of `dtype` ("<f4", "|u1", ...); bf16 has none.
Result<std::string> npyDescr(DType dtype);

/// The bytes before the data of a version 1.0 (or, for long shapes, 2.0)
/// .npy, padded so that the data starts 64-byte aligned as numpy does.
Result<std::string> encodeNpyHeader(DType dtype,
                                    const std::vector<int64_t> &shape);

/// Writes a .npy through PATH.tmp and a rename.
Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data);

/// Writes an .npz of stored members "KEY.npy", readable by numpy.load.
Status
writeNpz(const std::string &path,
         const std::vector<std::pair<std::string, NpyArrayView>> &arrays);

} // namespace modelc::rt
