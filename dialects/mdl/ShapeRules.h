// The size arithmetic of the built-in ops, shared by the frontend and the mdl
// dialect's verifiers: broadcasting, matmul, sliding windows, element counts.
//
// Plain C++17 without MLIR or LLVM, so that the frontend can use it. These
// functions only compute; each caller reports failures in its own words.
#ifndef MODELC_DIALECTS_MDL_SHAPERULES_H
#define MODELC_DIALECTS_MDL_SHAPERULES_H

#include <cstdint>
#include <optional>
#include <vector>

namespace modelc::shape_rules {

/// A size computed from int64 sizes before it is known to fit: 128 bits hold
/// any sum, or product of two, int64 sizes exactly.
using WideSize = __int128;

/// The product of `shape`'s sizes, or nullopt when it does not fit in int64.
std::optional<int64_t> getElementCount(const std::vector<int64_t> &shape);

/// The NumPy broadcast of two shapes: aligned from the right, each pair of
/// sizes must be equal or contain a 1. Nullopt when they are incompatible.
std::optional<std::vector<int64_t>>
broadcastShapes(const std::vector<int64_t> &lhs,
                const std::vector<int64_t> &rhs);

/// `torch.matmul` of two shapes of rank at least 1, with the parts that its
/// errors name. A 1-D lhs is promoted to a row `[1, k]` and a 1-D rhs to a
/// column `[k, 1]`; the added axis is removed from the result.
struct MatmulShapes {
  /// The contracting sizes: the last of lhs, the second-to-last of rhs.
  int64_t lhsK = 0, rhsK = 0;
  /// The batch dimensions (all but the last two) after promotion.
  std::vector<int64_t> lhsBatch, rhsBatch;
  /// The result shape; nullopt when lhsK != rhsK or the batch dimensions do
  /// not broadcast.
  std::optional<std::vector<int64_t>> result;
};
MatmulShapes inferMatmulShapes(const std::vector<int64_t> &lhs,
                               const std::vector<int64_t> &rhs);

/// `size + 2 * padding`, exactly.
WideSize getPaddedSize(int64_t size, int64_t padding);
/// The extent of a dilated kernel, `dilation * (kernel - 1) + 1`, exactly.
WideSize getDilatedExtent(int64_t kernel, int64_t dilation);

/// The exact number of positions of a sliding window along one axis,
/// `(size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1`, which
/// may exceed int64; nullopt when `stride` is below 1 or the window does not
/// fit in the padded input.
std::optional<WideSize> getWideWindowCount(int64_t size, int64_t kernel,
                                           int64_t stride, int64_t padding,
                                           int64_t dilation = 1);

/// The window count as above, also nullopt when an attribute is out of range
/// (kernel, stride or dilation below 1, negative padding) or when the padded
/// size or the dilated kernel extent does not fit in int64.
std::optional<int64_t> getWindowCount(int64_t size, int64_t kernel,
                                      int64_t stride, int64_t padding,
                                      int64_t dilation = 1);

} // namespace modelc::shape_rules

#endif // MODELC_DIALECTS_MDL_SHAPERULES_H
