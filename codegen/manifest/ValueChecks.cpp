// findValueChecks: a walk from an entry's block argument along the uses that
// keep its values, tracking which box of the argument a value holds, to the
// embeddings and cross_entropies that index with it.
#include "codegen/manifest/ValueChecks.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace modelc {

bool ValueCheck::operator==(const ValueCheck &other) const {
  return starts == other.starts && limits == other.limits &&
         strides == other.strides && min == other.min && end == other.end &&
         ignore == other.ignore && use == other.use;
}

namespace {

/// Which elements of the block argument a value on the walk holds. While
/// `exact`, the value is exactly the box of the argument (along axis i the
/// indices starts[i], starts[i] + strides[i], ..., below limits[i]), axis
/// for axis, so a slice of the value is a smaller box. A reshape, transpose,
/// broadcast or concat keeps every element of the box but not its axes: the
/// box still says which elements reach a use, but a later slice could drop
/// some of them, and the walk stops there.
struct Box {
  SmallVector<int64_t> starts, limits, strides;
  bool exact = true;
};

/// The box of `box` that `slice` (on a value that is exactly `box`) takes;
/// nullopt when it is empty.
std::optional<Box> sliceBox(const Box &box, ArrayRef<int64_t> starts,
                            ArrayRef<int64_t> limits,
                            ArrayRef<int64_t> strides) {
  Box result = box;
  for (size_t i = 0; i < starts.size(); ++i) {
    // Slices are normalised (0 <= start <= limit <= size, stride >= 1); a
    // huge stride takes one element, and the stride of one element is 1,
    // so every position below stays inside the field and nothing wraps.
    if (limits[i] <= starts[i])
      return std::nullopt;
    int64_t count = (limits[i] - starts[i] - 1) / strides[i] + 1;
    result.starts[i] = box.starts[i] + starts[i] * box.strides[i];
    result.strides[i] = count == 1 ? 1 : box.strides[i] * strides[i];
    result.limits[i] = result.starts[i] + (count - 1) * result.strides[i] + 1;
  }
  return result;
}

/// Whether converting integers of type `from` to `to` keeps every value
/// (as PyTorch's .to(dtype) does: widening, or the same type).
bool keepsValues(Type from, Type to) {
  auto a = dyn_cast<IntegerType>(from), b = dyn_cast<IntegerType>(to);
  if (!a || !b || a.getWidth() == 1 || b.getWidth() == 1)
    return false;
  if (a.isUnsigned() == b.isUnsigned())
    return b.getWidth() >= a.getWidth();
  // unsigned into a wider signed type.
  return a.isUnsigned() && b.getWidth() > a.getWidth();
}

Type elementType(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// "FILE:LINE:COL" of the user's source: the outermost call site of an
/// inlined op, the first file location of a fused one.
std::optional<std::string> formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return llvm::sys::path::filename(file.getFilename().getValue()).str() +
           ":" + std::to_string(file.getLine()) + ":" +
           std::to_string(file.getColumn());
  if (auto site = dyn_cast<CallSiteLoc>(loc)) {
    if (std::optional<std::string> caller = formatLocation(site.getCaller()))
      return caller;
    return formatLocation(site.getCallee());
  }
  if (auto name = dyn_cast<NameLoc>(loc))
    return formatLocation(name.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (std::optional<std::string> text = formatLocation(part))
        return text;
  return std::nullopt;
}

std::string describeUse(Operation *op, const std::string &what) {
  std::optional<std::string> at = formatLocation(op->getLoc());
  return at ? what + " at " + *at : what;
}

class Walk {
public:
  /// `type` is the argument's element type, whose values the data holds.
  Walk(IntegerType type, std::vector<ValueCheck> &checks)
      : type(type), checks(checks) {}

  /// Visits the uses of `v`, which holds `box` of the argument. `depth`
  /// and a budget of visits bound the walk on a pathological graph (a
  /// chain of concat(x, x) has exponentially many paths); stopping early
  /// only leaves checks out.
  void visit(Value v, const Box &box, unsigned depth = 0) {
    if (depth > 256)
      return;
    for (OpOperand &use : v.getUses()) {
      if (++visits > kMaxVisits)
        return;
      visitUse(use, box, depth + 1);
    }
  }

private:
  void visitUse(OpOperand &use, const Box &box, unsigned depth) {
    Operation *op = use.getOwner();
    if (auto slice = dyn_cast<mdl::SliceOp>(op)) {
      if (!box.exact)
        return;
      if (std::optional<Box> sliced = sliceBox(
              box, slice.getStarts(), slice.getLimits(), slice.getStrides()))
        visit(slice.getResult(), *sliced, depth);
      return;
    }
    if (auto split = dyn_cast<mdl::SplitOp>(op)) {
      if (!box.exact)
        return;
      int64_t axis = split.getAxis();
      int64_t parts = split.getNumResults();
      auto shape = cast<RankedTensorType>(use.get().getType()).getShape();
      int64_t part = shape[axis] / parts;
      for (auto [k, result] : llvm::enumerate(split.getResults())) {
        SmallVector<int64_t> starts(shape.size(), 0), limits(shape),
            strides(shape.size(), 1);
        starts[axis] = int64_t(k) * part;
        limits[axis] = starts[axis] + part;
        if (std::optional<Box> sliced = sliceBox(box, starts, limits, strides))
          visit(result, *sliced, depth);
      }
      return;
    }
    if (auto castOp = dyn_cast<mdl::CastOp>(op)) {
      if (keepsValues(elementType(castOp.getInput()),
                      elementType(castOp.getResult())))
        visit(castOp.getResult(), box, depth);
      return;
    }
    if (isa<mdl::ReshapeOp, mdl::TransposeOp, mdl::BroadcastToOp,
            mdl::ConcatOp>(op)) {
      Box frozen = box;
      frozen.exact = false;
      visit(op->getResult(0), frozen, depth);
      return;
    }
    if (auto embedding = dyn_cast<mdl::EmbeddingOp>(op)) {
      if (use.get() != embedding.getIds())
        return;
      int64_t rows =
          cast<RankedTensorType>(embedding.getTable().getType()).getDimSize(0);
      add(box, rows, std::nullopt,
          describeUse(op, "the ids of embedding (" + std::to_string(rows) +
                              " rows)"));
      return;
    }
    if (auto loss = dyn_cast<mdl::CrossEntropyOp>(op))
      return addLabels(use, loss.getLogits(), loss.getLabels(),
                       loss.getIgnoreIndex(), box);
    if (auto loss = dyn_cast<mdl::NllLossOp>(op))
      return addLabels(use, loss.getLogProbs(), loss.getLabels(),
                       loss.getIgnoreIndex(), box);
  }

  /// Class labels (`use` of an op whose class axis is the last of
  /// `scores`) in [0, C) or ignore_index.
  void addLabels(OpOperand &use, Value scores, Value labels,
                 int64_t ignoreIndex, const Box &box) {
    if (use.get() != labels)
      return;
    Operation *op = use.getOwner();
    int64_t classes = cast<RankedTensorType>(scores.getType()).getShape().back();
    add(box, classes, ignoreIndex,
        describeUse(op, "the labels of " +
                            op->getName().stripDialect().str() + " (" +
                            std::to_string(classes) + " classes)"));
  }

  void add(const Box &box, int64_t end, std::optional<int64_t> ignore,
           std::string use) {
    ValueCheck check;
    // The batch axis is axis 0 of the argument; the check is per sample.
    check.starts.assign(box.starts.begin() + 1, box.starts.end());
    check.limits.assign(box.limits.begin() + 1, box.limits.end());
    check.strides.assign(box.strides.begin() + 1, box.strides.end());
    check.min = 0;
    check.end = end;
    // An ignore value inside the range is already allowed, and one that
    // the data's type cannot hold (-100 in u8) needs no mention.
    if (ignore && (*ignore < 0 || *ignore >= end) && canHold(*ignore))
      check.ignore = ignore;
    // Nothing to check when the type holds only values in range (u8 ids
    // into a table of 256 rows).
    if (type.isUnsigned() && type.getWidth() < 63 &&
        end >= (int64_t(1) << type.getWidth()))
      return;
    check.use = std::move(use);
    if (!llvm::is_contained(checks, check))
      checks.push_back(std::move(check));
  }

  bool canHold(int64_t value) const {
    unsigned width = type.getWidth();
    if (type.isUnsigned())
      return value >= 0 && (width >= 63 || value < (int64_t(1) << width));
    if (width >= 64)
      return true;
    int64_t half = int64_t(1) << (width - 1);
    return value >= -half && value < half;
  }

  static constexpr unsigned kMaxVisits = 100000;
  IntegerType type;
  std::vector<ValueCheck> &checks;
  unsigned visits = 0;
};

} // namespace

std::vector<ValueCheck> findValueChecks(BlockArgument arg) {
  std::vector<ValueCheck> checks;
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  auto element = type ? dyn_cast<IntegerType>(type.getElementType()) : nullptr;
  if (!element || element.getWidth() == 1 || type.getRank() == 0)
    return checks;
  Box box;
  for (int64_t size : type.getShape()) {
    box.starts.push_back(0);
    box.limits.push_back(size);
    box.strides.push_back(1);
  }
  Walk(element, checks).visit(arg, box);
  return checks;
}

} // namespace modelc
