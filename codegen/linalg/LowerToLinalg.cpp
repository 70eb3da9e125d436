// The pass --mdl-lower-to-linalg: every mdl op in the program's functions
// becomes linalg/tensor/arith/math on signless tensors (the pattern families
// of Patterns.h), then each function's buffer accesses are put in the form
// one-shot bufferization needs.
#include "codegen/Passes.h"
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlDialect.h"
#include "dialects/mdlrt/MdlrtDialect.h"
#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/MapVector.h"

namespace modelc {
#define GEN_PASS_DEF_MDLLOWERTOLINALG
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

/// Reports every mdl op in a function that no pattern rewrites, so the user
/// sees which op codegen is missing rather than a generic legalization
/// failure.
LogicalResult checkEveryOpHasLowering(ModuleOp module,
                                      RewritePatternSet &patterns) {
  llvm::DenseSet<OperationName> lowered;
  for (const std::unique_ptr<RewritePattern> &pattern :
       patterns.getNativePatterns())
    if (std::optional<OperationName> root = pattern->getRootKind())
      lowered.insert(*root);
  bool missing = false;
  module.walk([&](func::FuncOp func) {
    func.walk([&](Operation *op) {
      if (isa<mdl::MdlDialect>(op->getDialect()) &&
          !lowered.contains(op->getName())) {
        op->emitError("no lowering to linalg for '")
            << op->getName() << "' (in function '" << func.getSymName() << "')";
        missing = true;
      }
    });
  });
  return failure(missing);
}

/// The top-level op of `block` that contains `op`.
Operation *getTopLevelOp(Block &block, Operation *op) {
  return block.findAncestorOpInBlock(*op);
}

/// The ops that read the memory of `tensor` once bufferized: its users,
/// followed through the ops whose result is a view of an operand
/// (reshapes, slices, casts) or a DPS op's tied result.
SmallVector<Operation *> collectMemoryReaders(Value tensor) {
  SmallVector<Operation *> readers;
  SmallVector<Value> worklist = {tensor};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      readers.push_back(user);
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
              tensor::ExtractSliceOp, tensor::CastOp>(user))
        worklist.append(user->result_begin(), user->result_end());
      else if (auto dps = dyn_cast<DestinationStyleOpInterface>(user))
        if (dps.isDpsInit(&use))
          worklist.push_back(dps.getTiedOpResult(&use));
    }
  }
  return readers;
}

/// A store of a fresh linalg.fill (a splat, such as the zeros that reset a
/// gradient) becomes the fill of the buffer itself, at the store's place:
/// the same write, without a temporary and a copy.
void fillInPlace(bufferization::MaterializeInDestinationOp write) {
  auto fill = write.getSource().getDefiningOp<linalg::FillOp>();
  if (!fill || !write.getSource().hasOneUse() ||
      !fill.getOutputs().front().getDefiningOp<tensor::EmptyOp>())
    return;
  OpBuilder b(write);
  b.create<linalg::FillOp>(write.getLoc(), fill.getInputs().front(),
                           write.getDest());
  write.erase();
}

/// The accesses of one function to one arena symbol.
struct SymbolAccesses {
  mdlrt::BufferOp buffer;
  SmallVector<bufferization::ToTensorOp> reads;
  SmallVector<bufferization::MaterializeInDestinationOp> writes;
};

/// Puts the accesses of `func` to each symbol in the form one-shot
/// bufferization handles correctly:
///  - one mdlrt.buffer per symbol, at the top of the function;
///  - one to_tensor per symbol (all loads of a symbol precede its stores,
///    so they all read the same contents), as `restrict` requires;
///  - a to_tensor whose memory is still read at or after the first store to
///    the symbol is copied first: bufferization does not see writes through
///    memrefs, and the tensor must keep the contents it had when loaded;
///  - materialize_in_destination keeps `restrict` only when it is the only
///    access of the function to the symbol, the condition under which empty
///    tensor elimination may compute the value in place.
LogicalResult orderBufferAccesses(func::FuncOp func) {
  Block &body = func.getBody().front();
  llvm::MapVector<Attribute, SymbolAccesses> symbols;
  Operation *lastPlaced = nullptr;
  for (auto buffer :
       llvm::make_early_inc_range(body.getOps<mdlrt::BufferOp>())) {
    SymbolAccesses &accesses = symbols[buffer.getNameAttr()];
    if (!accesses.buffer) {
      accesses.buffer = buffer;
      if (buffer->getPrevNode() != lastPlaced) {
        if (lastPlaced)
          buffer->moveAfter(lastPlaced);
        else
          buffer->moveBefore(&body.front());
      }
      lastPlaced = buffer;
      continue;
    }
    if (accesses.buffer.getType() != buffer.getType())
      return buffer.emitError("buffer ")
             << buffer.getNameAttr() << " is used with two types";
    buffer.replaceAllUsesWith(accesses.buffer.getResult());
    buffer.erase();
  }

  for (auto &[name, accesses] : symbols) {
    for (Operation *user : accesses.buffer->getUsers()) {
      if (auto read = dyn_cast<bufferization::ToTensorOp>(user))
        accesses.reads.push_back(read);
      else if (auto write =
                   dyn_cast<bufferization::MaterializeInDestinationOp>(user))
        accesses.writes.push_back(write);
    }
    auto byPosition = [&](Operation *a, Operation *b) {
      return getTopLevelOp(body, a)->isBeforeInBlock(getTopLevelOp(body, b));
    };
    llvm::sort(accesses.reads, byPosition);
    llvm::sort(accesses.writes, byPosition);
    if (!accesses.reads.empty() && !accesses.writes.empty() &&
        byPosition(accesses.writes.front(), accesses.reads.back()))
      return accesses.reads.back().emitError("reads ")
             << name << " after a store to it in the same function";

    bufferization::ToTensorOp read;
    if (!accesses.reads.empty()) {
      read = accesses.reads.front();
      for (bufferization::ToTensorOp other :
           ArrayRef(accesses.reads).drop_front()) {
        other.replaceAllUsesWith(read.getResult());
        other.erase();
      }
    }
    // Storing what was loaded, unchanged, is no write at all.
    llvm::erase_if(accesses.writes, [&](auto write) {
      if (!read || write.getSource() != read.getResult())
        return false;
      write.erase();
      return true;
    });
    if (read && !accesses.writes.empty()) {
      Operation *firstWrite = accesses.writes.front();
      bool readLate =
          llvm::any_of(collectMemoryReaders(read), [&](Operation *reader) {
            return !byPosition(reader, firstWrite);
          });
      if (readLate) {
        OpBuilder b(read->getNextNode());
        auto type = cast<RankedTensorType>(read.getType());
        Value empty =
            modelc::lowering::createEmptyTensor(b, read.getLoc(), type);
        auto copy =
            b.create<linalg::CopyOp>(read.getLoc(), read.getResult(), empty);
        read.getResult().replaceAllUsesExcept(copy.getResult(0), copy);
      }
    }
    bool onlyAccess = !read && accesses.writes.size() == 1;
    for (auto write : accesses.writes) {
      write.setRestrict(onlyAccess);
      fillInPlace(write);
    }
  }
  return success();
}

/// Erases the ops of `block` whose results are unused and that have no
/// effect, such as splat constants folded into loop bodies and the
/// transposes that a GEMM reads transposed instead.
void eraseDeadOps(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isOpTriviallyDead(&op))
      op.erase();
}

struct MdlLowerToLinalgPass
    : modelc::impl::MdlLowerToLinalgBase<MdlLowerToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    modelc::populateElementwiseToLinalgPatterns(patterns);
    modelc::populateReductionToLinalgPatterns(patterns);
    modelc::populateShapeToLinalgPatterns(patterns);
    modelc::populateStorageToLinalgPatterns(patterns);
    modelc::populateNNToLinalgPatterns(patterns);
    if (failed(checkEveryOpHasLowering(module, patterns)))
      return signalPassFailure();

    ConversionTarget target(*ctx);
    target.addLegalDialect<
        arith::ArithDialect, bufferization::BufferizationDialect,
        func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
        memref::MemRefDialect, mdlrt::MdlrtDialect, scf::SCFDialect,
        tensor::TensorDialect, vector::VectorDialect>();
    // The declarations (mdl.param, mdl.buffer, mdl.data, mdl.train,
    // mdl.infer and their bodies) stay for the manifest; every mdl op in a
    // function must go.
    target.addDynamicallyLegalDialect<mdl::MdlDialect>(
        [](Operation *op) { return !op->getParentOfType<func::FuncOp>(); });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // Unused loads are no accesses; the ordering may leave dead buffers.
      eraseDeadOps(func.getBody().front());
      if (failed(orderBufferAccesses(func)))
        return signalPassFailure();
      eraseDeadOps(func.getBody().front());
    }
  }
};

} // namespace
