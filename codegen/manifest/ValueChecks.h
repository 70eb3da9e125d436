// Value checks: which elements of an entry's inputs reach an embedding as
// ids or a cross_entropy as labels, and the values they may take there
// (docs/codegen/value-checks.md). The kernels clamp such an index into
// range so that no input can make them read out of bounds; the runtime
// checks the data against these ranges first, so that a bad id or label is
// an error naming the file and element rather than a silently wrong answer.
#ifndef MODELC_CODEGEN_MANIFEST_VALUECHECKS_H
#define MODELC_CODEGEN_MANIFEST_VALUECHECKS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class BlockArgument;
} // namespace mlir

namespace modelc {

/// Every element of the per-sample box (along axis i: starts[i],
/// starts[i] + strides[i], ... below limits[i]) must lie in [min, end) or
/// equal `ignore`.
struct ValueCheck {
  std::vector<int64_t> starts, limits, strides;
  int64_t min = 0, end = 0;
  std::optional<int64_t> ignore;
  std::string use; // "the ids of embedding (256 rows) at f.mdl:27:16"

  bool operator==(const ValueCheck &other) const;
};

/// The checks on `arg`, a block argument of an mdl.train or mdl.infer body
/// (batch axis first; the boxes are per sample, without it). Follows the
/// argument through value-preserving ops (integer casts that keep every
/// value, slices, splits, reshapes, transposes, broadcasts, concats) to the
/// embeddings and cross_entropies it feeds. A path the analysis cannot
/// follow exactly adds no check: a check never rejects data whose element
/// does not reach the use it names. Duplicates are dropped.
std::vector<ValueCheck> findValueChecks(mlir::BlockArgument arg);

} // namespace modelc

#endif // MODELC_CODEGEN_MANIFEST_VALUECHECKS_H
