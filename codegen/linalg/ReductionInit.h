// A reduction that starts from a constant instead of reading its output's
// first value: --mdl-fuse-elementwise folds the linalg.fill that
// initialises a reduction's output into the reduction (one kernel, one pass
// over the output, instead of two), and the targets recognise the form.
//
// The folded body reads
//   %first = (index(r0) == 0) && (index(r1) == 0) && ...  // reduction loops
//   %acc = arith.select %first, %init, %out
// and uses %acc where it used %out: the first iteration of every output
// element starts from %init, a value defined outside the body, exactly as
// the fill made it; the output is never read before it is written.
#ifndef MODELC_CODEGEN_LINALG_REDUCTIONINIT_H
#define MODELC_CODEGEN_LINALG_REDUCTIONINIT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace modelc {

/// Folds the `linalg.fill` (on tensors) that produces `init`, an init of
/// `op` with reduction loops whose block argument the body reads, into
/// `op`: the init becomes the fill's destination (a `tensor.empty`, whose
/// contents are never read) and the body selects the fill's value on the
/// first reduction iteration. Fails, changing nothing, when
/// `init` is not such a fill used by `op` alone.
mlir::LogicalResult foldFillIntoReduction(mlir::RewriterBase &rewriter,
                                          mlir::linalg::GenericOp op,
                                          mlir::OpOperand &init);

/// The select of a folded fill: `select(first reduction iteration, init,
/// out)` as the one use of `out`, and the value it starts from.
struct FirstIterationInit {
  mlir::Operation *select;
  mlir::Value init;
};

/// `out`'s folded fill, when the body reads `out` only through one.
std::optional<FirstIterationInit>
matchFirstIterationInit(mlir::linalg::LinalgOp op, mlir::BlockArgument out);

} // namespace modelc

#endif // MODELC_CODEGEN_LINALG_REDUCTIONINIT_H
