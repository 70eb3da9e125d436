// Parameters and optimizer state as safetensors files: `--save`, `--init`,
// `--weights` and the two tensor files of a checkpoint.
#pragma once

#include "runtime/driver/Arena.h"

namespace modelc::rt {

/// A buffer of the arena under the name it has in a file.
struct NamedBuffer {
  std::string name;
  const BufferInfo *buffer;
};

/// Every parameter, by its PyTorch name, in manifest order.
std::vector<NamedBuffer> parameterBuffers(const Manifest &manifest);

/// The optimizer state of a train entry, by key ("m.NAME", ...).
std::vector<NamedBuffer> stateBuffers(const Manifest &manifest,
                                      const std::string &entry);

/// Whether every element of these (floating-point) buffers is finite.
bool allFinite(const std::vector<NamedBuffer> &buffers, const Arena &arena);

/// Writes the buffers, in order, with metadata {"format": "pt"}.
Status saveTensors(const std::string &path,
                   const std::vector<NamedBuffer> &buffers, const Arena &arena);

/// Reads a file whose tensors must be exactly `buffers` (names, dtypes,
/// shapes) into the arena. `what` names the tensors in messages
/// ("parameters", "optimizer state").
Status loadTensors(const std::string &path,
                   const std::vector<NamedBuffer> &buffers, Arena &arena,
                   const std::string &what);

/// The `--weights` file of eval and infer into the arena: required when the
/// program has parameters; a program without any needs none.
Status loadWeights(const std::string &path, const Manifest &manifest,
                   Arena &arena);

} // namespace modelc::rt
