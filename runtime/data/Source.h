// One field of a data set (spec §7): its declared dtype and per-sample
// shape, and the source its samples come from (idx, npy, npz, raw file,
// windows over a token stream), opened and checked once at start-up.
#pragma once

#include "runtime/data/ValueCheck.h"
#include "runtime/io/DType.h"
#include "runtime/support/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace modelc::rt {

/// A field as the manifest declares it (schema/manifest.fbs, table Field).
struct FieldSpec {
  /// schema/DataSources.def, in its order.
  enum class Kind {
#define MODELC_DATA_SOURCE(KIND, NAME, ARGS) KIND,
#include "schema/DataSources.def"
  };
  std::string name;
  DType dtype;
  std::vector<int64_t> shape; // per sample
  Kind kind;
  Kind inner = Kind::File; // the token stream's source, for Windows
  std::string path;
  std::string key; // the npz member
  std::vector<ValueCheck> checks; // on its values, checked at open (each
                                  // fits `shape`: Manifest::load checks)
  /// Windows: tokens between the starts of consecutive windows; 0 for the
  /// window length - 1 (windowStride() says which).
  int64_t windowStride = 0;

  /// The stride of Windows, its default resolved.
  int64_t windowStep() const {
    return windowStride > 0 ? windowStride
                            : (shape.empty() ? 1 : shape[0] - 1);
  }
};

/// The samples of one field. Opening checked everything, so reading cannot
/// fail; readSample is cheap (a copy from memory or a mapped file) and may
/// be called from several threads at once.
class FieldSource {
public:
  virtual ~FieldSource();
  virtual int64_t numSamples() const = 0;
  /// Bytes of one sample: the field's shape times its dtype size.
  size_t sampleBytes() const { return sampleBytes_; }
  /// Copies sample `index` (0 <= index < numSamples()) to `dst`; an index
  /// out of range writes zeros rather than reading outside the data.
  virtual void readSample(int64_t index, uint8_t *dst) const = 0;

protected:
  explicit FieldSource(size_t sampleBytes) : sampleBytes_(sampleBytes) {}

private:
  size_t sampleBytes_;
};

/// Opens and checks a field's source: the dtype must equal the field's, the
/// per-sample shape must equal the field's, and the data must be exactly
/// as long as its header says. Errors name the file, what was expected and
/// what was found.
Result<std::unique_ptr<FieldSource>> openFieldSource(const FieldSpec &spec);

/// "idx", "npy", "npz", "file", "windows": the spelling in `.mdl` sources.
const char *sourceKindName(FieldSpec::Kind kind);

} // namespace modelc::rt
