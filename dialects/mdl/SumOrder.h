// The order in which `mdl.sum` adds f32 terms, which its lowering
// (codegen/linalg/ReductionToLinalg.cpp, createBlockedSum) implements and
// passes that sum scalars themselves (--mdl-expand-optimizer's gradient
// norm) reproduce, so that both round alike: PyTorch's CPU cascade. With K
// terms per result and K > kSumBlock, the first floor(K / kSumBlock) blocks
// of kSumBlock terms are each summed in order from 0, then those partial
// sums the same way, level after level; the terms after the last whole
// block of each level are summed in order and added to the result at the
// end, in the order of the levels. Fewer terms, and every other
// accumulator type, sum in order from 0.
#ifndef MODELC_DIALECTS_MDL_SUMORDER_H
#define MODELC_DIALECTS_MDL_SUMORDER_H

#include <cstdint>

namespace mlir::mdl {

/// The block of the cascade: sums of more f32 terms than this go in blocks.
inline constexpr int64_t kSumBlock = 128;

} // namespace mlir::mdl

#endif // MODELC_DIALECTS_MDL_SUMORDER_H
