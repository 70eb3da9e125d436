// --mdl-shard-data-parallel: the per-rank step of data parallelism. In each
// fwd_bwd function the gradient buffers are grouped into buckets of at most
// `bucket-mb` MB in the order the backward finishes them (the order of
// their last stores, which is the reverse of the forward's layers), and one
// mdl.all_reduce per bucket follows the store that finishes it: on the
// step's last micro-batch it averages the bucket over the ranks, so a
// bucket's communication can overlap the backward of the layers before it,
// as torch's DistributedDataParallel does. The cap is the entry's
// `parallel { bucket_mb }` (its mdl.train settings), else the pass option.
// The rank count stays a run-time value. docs/passes/data-parallel.md.
#include "passes/Passes.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>

namespace modelc {
#define GEN_PASS_DEF_MDLSHARDDATAPARALLEL
#include "passes/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace mlir::mdl;

namespace {

/// A gradient buffer and the top-level op of the function that finishes it
/// (its last store, or the op that holds that store).
struct FinishedGradient {
  FlatSymbolRefAttr name;
  Type element;
  uint64_t bytes;
  Operation *finisher;
};

/// The ancestor of `op` in `block`.
Operation *ancestorIn(Block &block, Operation *op) {
  while (op && op->getBlock() != &block)
    op = op->getParentOp();
  return op;
}

struct MdlShardDataParallelPass
    : modelc::impl::MdlShardDataParallelBase<MdlShardDataParallelPass> {
  using MdlShardDataParallelBase::MdlShardDataParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!(bucketMb > 0)) {
      module.emitError("--mdl-shard-data-parallel: bucket-mb must be "
                       "positive, got ")
          << bucketMb;
      return signalPassFailure();
    }
    llvm::StringMap<BufferOp> gradients;
    for (auto buffer : module.getOps<BufferOp>())
      if (buffer.getRole() == "grad")
        gradients[buffer.getSymName()] = buffer;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto kind = func->getAttrOfType<StringAttr>("mdl.function");
      if (kind && kind.getValue() == "fwd_bwd" && !func.isExternal())
        shard(func, gradients, entryBucketMb(module, func));
    }
  }

  /// The entry's `parallel { bucket_mb }` (spec §8), else the option.
  double entryBucketMb(ModuleOp module, func::FuncOp func) {
    auto entry = func->getAttrOfType<StringAttr>("mdl.entry");
    auto train = entry ? module.lookupSymbol<TrainOp>(entry) : TrainOp();
    auto parallel =
        train ? train.getSettings().getAs<DictionaryAttr>("parallel")
              : DictionaryAttr();
    auto mb = parallel ? parallel.getAs<FloatAttr>("bucket_mb") : FloatAttr();
    return mb && mb.getValueAsDouble() > 0 ? mb.getValueAsDouble()
                                           : double(bucketMb);
  }

  void shard(func::FuncOp func, llvm::StringMap<BufferOp> &gradients,
             double capMb) {
    Block &body = func.getBody().front();
    // Already sharded: nothing to add.
    if (!func.getOps<AllReduceOp>().empty())
      return;
    llvm::MapVector<StringRef, FinishedGradient> finished;
    func.walk([&](StoreOp store) {
      auto it = gradients.find(store.getName());
      if (it == gradients.end())
        return;
      RankedTensorType type = it->second.getType();
      uint64_t bytes = uint64_t(type.getNumElements()) *
                       ((type.getElementTypeBitWidth() + 7) / 8);
      // Walk order is program order: the last store seen finishes it.
      finished[store.getName()] = {store.getNameAttr(),
                                   type.getElementType(), bytes,
                                   ancestorIn(body, store)};
    });
    std::vector<FinishedGradient> order;
    for (auto &entry : finished)
      order.push_back(entry.second);
    std::stable_sort(order.begin(), order.end(),
                     [](const FinishedGradient &a, const FinishedGradient &b) {
                       return a.finisher != b.finisher &&
                              a.finisher->isBeforeInBlock(b.finisher);
                     });
    // Buckets in that order, one element type each (as DDP's): each type
    // has its bucket open until the next gradient would overflow it; a
    // gradient larger than the cap is a bucket of its own.
    uint64_t cap = uint64_t(capMb * 1e6);
    std::vector<std::vector<FinishedGradient>> buckets;
    llvm::DenseMap<Type, std::pair<std::vector<FinishedGradient>, uint64_t>>
        open;
    for (const FinishedGradient &g : order) {
      auto &[bucket, filled] = open[g.element];
      if (filled > 0 && filled + g.bytes > cap) {
        buckets.push_back(std::move(bucket));
        bucket.clear();
        filled = 0;
      }
      bucket.push_back(g);
      filled += g.bytes;
    }
    for (const FinishedGradient &g : order) {
      auto it = open.find(g.element);
      if (it != open.end() && !it->second.first.empty())
        buckets.push_back(std::move(it->second.first));
      if (it != open.end())
        open.erase(it);
    }
    // Issued in the order their last gradients are finished.
    auto last = [](const std::vector<FinishedGradient> &b) {
      return b.back().finisher;
    };
    std::stable_sort(buckets.begin(), buckets.end(),
                     [&](const auto &a, const auto &b) {
                       return last(a) != last(b) &&
                              last(a)->isBeforeInBlock(last(b));
                     });
    OpBuilder builder(func.getContext());
    SmallVector<int64_t> bucketBytes;
    for (auto [index, bucket] : llvm::enumerate(buckets)) {
      SmallVector<Attribute> names;
      int64_t bytes = 0;
      for (const FinishedGradient &g : bucket) {
        names.push_back(g.name);
        bytes += int64_t(g.bytes);
      }
      bucketBytes.push_back(bytes);
      builder.setInsertionPointAfter(bucket.back().finisher);
      builder.create<AllReduceOp>(bucket.back().finisher->getLoc(),
                                  builder.getArrayAttr(names),
                                  builder.getI64IntegerAttr(int64_t(index)));
    }
    // The buckets' sizes, in issue order, for the manifest (describe).
    func->setAttr("mdl.gradient_buckets", builder.getI64ArrayAttr(bucketBytes));
  }
};

} // namespace
