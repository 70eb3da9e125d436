// The safetensors format (huggingface/safetensors): parameters, optimizer
// state and checkpoints. Reading validates the file as strictly as the
// reference implementation; writing matches its layout (header padded with
// spaces to a multiple of 8 bytes).
#pragma once

#include "runtime/io/DType.h"
#include "runtime/support/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace modelc::rt {

/// The reference implementation's limit on the JSON header.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

/// One tensor read from a file; `bytes` is little-endian, row-major.
struct TensorData {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// Reads every tensor, in the order of their data in the file. The header
/// is checked completely: its length against the file and the limit; that
/// it is one JSON object from its first byte, followed by nothing but
/// spaces (0x20), as the format specifies; no key twice; each dtype, each
/// shape against its byte span; and the spans must tile the data exactly
/// (no overlap, no gap, nothing after the last). `metadata`, when given,
/// receives the "__metadata__" strings.
Result<std::vector<TensorData>>
readSafetensors(const std::string &path,
                std::map<std::string, std::string> *metadata = nullptr);

/// readSafetensors of a file held in memory; errors start with `name`.
Result<std::vector<TensorData>>
parseSafetensors(const uint8_t *data, size_t size, const std::string &name,
                 std::map<std::string, std::string> *metadata = nullptr);

/// A tensor to write; `data` holds `bytes` bytes, which must equal the shape
/// times the dtype size.
struct TensorView {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void *data;
  size_t bytes;
};

/// Writes the tensors in the given order to PATH.tmp, then renames it to
/// PATH. Names must be unique and not "__metadata__".
Status
writeSafetensors(const std::string &path,
                 const std::vector<TensorView> &tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace modelc::rt
