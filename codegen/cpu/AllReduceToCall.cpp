// mdlrt.all_reduce on the CPU: the bucket's buffers handed to the runtime
// one by one (modelc_all_reduce_add_<type>: address and element count),
// then modelc_all_reduce_bucket, which reduces them as one collective
// (ProgramABI.h; runtime/dist/RankContext.cpp).
#include "codegen/cpu/CpuLowering.h"

#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace modelc {

namespace {

/// The runtime function `name` of `arguments` returning nothing, declared
/// once.
func::FuncOp getRuntimeFunction(ModuleOp module, StringRef name,
                                TypeRange arguments) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto func = builder.create<func::FuncOp>(
      module.getLoc(), name, builder.getFunctionType(arguments, {}));
  func.setPrivate();
  return func;
}

/// The verifier allows f32 and f64 only.
StringRef addFunctionName(Type element) {
  return element.isF32() ? "modelc_all_reduce_add_f32"
                         : "modelc_all_reduce_add_f64";
}

} // namespace

void lowerAllReducesToCalls(ModuleOp module) {
  SmallVector<mdlrt::AllReduceOp> buckets;
  module.walk([&](mdlrt::AllReduceOp op) { buckets.push_back(op); });
  for (mdlrt::AllReduceOp bucket : buckets) {
    OpBuilder builder(bucket);
    Location loc = bucket.getLoc();
    Type i64 = builder.getI64Type();
    Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
    for (Value buffer : bucket.getBuffers()) {
      auto type = cast<MemRefType>(buffer.getType());
      func::FuncOp add = getRuntimeFunction(
          module, addFunctionName(type.getElementType()), {ptr, i64});
      builder.create<func::CallOp>(
          loc, add,
          ValueRange{createElementPointer(builder, loc, buffer),
                     builder.create<arith::ConstantIntOp>(
                         loc, type.getNumElements(), 64)});
    }
    func::FuncOp run =
        getRuntimeFunction(module, "modelc_all_reduce_bucket", {i64});
    builder.create<func::CallOp>(
        loc, run,
        ValueRange{builder.create<arith::ConstantIntOp>(
            loc, bucket.getBucket(), 64)});
    bucket.erase();
  }
}

} // namespace modelc
