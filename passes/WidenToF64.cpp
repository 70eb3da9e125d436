// --mdl-widen-to-f64: every f32 tensor of the program becomes f64, so that
// gradient checks can compare with finite differences at 1e-6 (a testing
// aid behind `modelc --widen-f64`, not a precision setting).
#include "passes/Passes.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace modelc {
#define GEN_PASS_DEF_MDLWIDENTOF64
#include "passes/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {
/// `type` with f64 elements when it has f32 ones, else null.
RankedTensorType widened(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getElementType().isF32())
    return {};
  return tensor.clone(Float64Type::get(type.getContext()));
}

struct WidenToF64Pass : modelc::impl::MdlWidenToF64Base<WidenToF64Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Inputs keep the data's dtype (the runtime checks files against it);
    // their loads are widened with a cast instead.
    DenseSet<StringRef> inputs;
    for (auto buffer : module.getOps<mdl::BufferOp>()) {
      if (buffer.getRole() == "input") {
        inputs.insert(buffer.getSymName());
        continue;
      }
      // The update function (built after this pass) logs lr and grad_norm
      // as f32 whatever the parameters' type (docs/pipeline.md).
      if (buffer.getRole() == "output" &&
          (buffer.getKey() == "lr" || buffer.getKey() == "grad_norm"))
        continue;
      if (RankedTensorType type = widened(buffer.getType()))
        buffer.setType(type);
    }
    for (auto param : module.getOps<mdl::ParamOp>())
      if (RankedTensorType type = widened(param.getType()))
        param.setType(type);

    // The entry declarations keep their batch types (the data's dtype) as
    // block arguments, cast where they enter, and are widened like the
    // functions so that their parameter reads still verify.
    SmallVector<Operation *> bodies;
    for (Operation &op : module.getOps())
      if (isa<mdl::TrainOp, mdl::InferOp>(op) ||
          (isa<func::FuncOp>(op) && op.hasAttr("mdl.function")))
        bodies.push_back(&op);
    for (Operation *body : bodies) {
      if (!isa<func::FuncOp>(body))
        for (Block &block : body->getRegion(0))
          for (BlockArgument argument : block.getArguments())
            widenValueAtStart(argument, block);
      body->walk([&](Operation *op) {
        if (op == body)
          return;
        if (auto load = dyn_cast<mdl::LoadOp>(op)) {
          if (inputs.contains(load.getName())) {
            widenLoadedInput(load);
            return;
          }
        }
        if (auto constant = dyn_cast<mdl::ConstantOp>(op)) {
          widenConstant(constant);
          return;
        }
        for (Value result : op->getResults())
          if (RankedTensorType type = widened(result.getType()))
            result.setType(type);
      });
    }
  }

  /// Casts an f32 block argument to f64 at the start of its block.
  void widenValueAtStart(BlockArgument argument, Block &block) {
    RankedTensorType type = widened(argument.getType());
    if (!type)
      return;
    OpBuilder builder = OpBuilder::atBlockBegin(&block);
    auto cast = builder.create<mdl::CastOp>(argument.getLoc(), type, argument);
    argument.replaceAllUsesExcept(cast.getResult(), cast);
  }

  /// Casts an f32 input to f64 right after it is loaded.
  void widenLoadedInput(mdl::LoadOp load) {
    RankedTensorType type = widened(load.getType());
    if (!type)
      return;
    OpBuilder builder(load->getContext());
    builder.setInsertionPointAfter(load);
    auto cast = builder.create<mdl::CastOp>(load.getLoc(), type,
                                            load.getResult());
    load.getResult().replaceAllUsesExcept(cast.getResult(), cast);
  }

  void widenConstant(mdl::ConstantOp constant) {
    auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
    RankedTensorType type = widened(constant.getType());
    if (!dense || !type)
      return;
    SmallVector<double> values;
    for (APFloat value : dense.getValues<APFloat>())
      values.push_back(value.convertToFloat());
    constant.setValueAttr(DenseElementsAttr::get(type, ArrayRef(values)));
    constant.getResult().setType(type);
  }
};
} // namespace
