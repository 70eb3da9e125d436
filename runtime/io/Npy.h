// NumPy's .npy and .npz formats (numpy/lib/format.py): little-endian,
// C-order arrays of the runtime's dtypes; header versions 1.0, 2.0 and 3.0.
// npz archives are zip files of .npy members, stored or deflated (no zip64).
#pragma once

#include "runtime/io/DType.h"
#include "runtime/support/Status.h"

#include <cstdint>
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
/// `nameForErrors`.
Result<NpyHeader> parseNpyHeader(const uint8_t *data, size_t size,
                                 const std::string &nameForErrors);

/// Parses a whole .npy held in memory.
Result<NpyArray> parseNpy(const uint8_t *data, size_t size,
                          const std::string &nameForErrors);

Result<NpyArray> readNpy(const std::string &path);

/// Reads member `key` of an .npz: the member "KEY.npy", or "KEY" itself.
Result<NpyArray> readNpzMember(const std::string &path, const std::string &key);

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
