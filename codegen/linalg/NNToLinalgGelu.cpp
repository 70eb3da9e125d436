// Lowering of mdl.gelu and mdl.gelu_grad (erf and tanh forms) to
// elementwise linalg.generic ops, with PyTorch's formulas and constants
// (f16/bf16 computed in f32 and rounded once, as PyTorch's opmath).
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

// The constants of PyTorch's GeluKernel.cpp.
constexpr double kSqrtHalf = 0.70710678118654752440; // 1 / sqrt(2)
constexpr double kPdfScale = 0.39894228040143267794; // 1 / sqrt(2 pi)
constexpr double kTanhBeta = 0.79788456080286535588; // sqrt(2 / pi)
constexpr double kTanhKappa = 0.044715;

/// An elementwise generic over `inputs` (all of `type`) computing
/// `fn(element values)`.
Value createElementwise(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(type.getRank()));
  Value init =
      createEmptyTensor(b, loc, type.getShape(), type.getElementType());
  return b
      .create<linalg::GenericOp>(
          loc, type, inputs, init, maps, iteratorTypes(type.getRank(), 0),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(l, fn(nb, l, args.drop_back()));
          })
      .getResult(0);
}

/// Arithmetic on scalars of one float type, to keep the formulas readable.
struct FloatMath {
  OpBuilder &b;
  Location loc;
  Type type;

  Value constant(double value) const {
    return createScalarConstant(b, loc, type, value);
  }
  Value add(Value x, Value y) const {
    return b.create<arith::AddFOp>(loc, x, y);
  }
  Value sub(Value x, Value y) const {
    return b.create<arith::SubFOp>(loc, x, y);
  }
  Value mul(Value x, Value y) const {
    return b.create<arith::MulFOp>(loc, x, y);
  }
  Value mul(Value x, double y) const { return mul(x, constant(y)); }
  Value erf(Value x) const { return b.create<math::ErfOp>(loc, x); }
  Value exp(Value x) const { return b.create<math::ExpOp>(loc, x); }
  Value tanh(Value x) const { return b.create<math::TanhOp>(loc, x); }

  /// inner = sqrt(2/pi) * (x + 0.044715 x^3), the tanh form's argument.
  Value tanhInner(Value x) const {
    Value cube = mul(mul(x, x), x);
    Value sum = add(x, mul(cube, kTanhKappa));
    return mul(sum, kTanhBeta);
  }
};

/// gelu: "none" is x * 0.5 * (1 + erf(x / sqrt(2))); "tanh" is
/// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
struct GeluLowering : OpConversionPattern<mlir::mdl::GeluOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::GeluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = getSignlessTensorType(op.getType());
    bool tanhForm = op.getApproximate() == "tanh";
    auto gelu = [&](OpBuilder &b, Location l, ValueRange args) {
      FloatMath m{b, l, args[0].getType()};
      Value x = args[0];
      Value halfX = m.mul(x, 0.5);
      Value squashed =
          tanhForm ? m.tanh(m.tanhInner(x)) : m.erf(m.mul(x, kSqrtHalf));
      return m.mul(halfX, m.add(m.constant(1), squashed));
    };
    rewriter.replaceOp(
        op, createElementwise(rewriter, op.getLoc(), type, adaptor.getInput(),
                              [&](OpBuilder &b, Location l, ValueRange args) {
                                return computeInOpmath(
                                    b, l, type.getElementType(), args, gelu);
                              }));
    return success();
  }
};

/// gelu_grad = grad * gelu'(x):
///  "none": cdf + x * pdf, cdf = 0.5 * (1 + erf(x / sqrt(2))),
///          pdf = exp(-x^2 / 2) / sqrt(2 pi);
///  "tanh": with t = tanh(inner), 0.5 * (1 + t)
///          + 0.5 x * (1 - t^2) * sqrt(2/pi) * (1 + 3 * 0.044715 x^2).
struct GeluGradLowering : OpConversionPattern<mlir::mdl::GeluGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::GeluGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = getSignlessTensorType(op.getType());
    bool tanhForm = op.getApproximate() == "tanh";
    auto geluGrad = [&](OpBuilder &b, Location l, ValueRange args) {
      FloatMath m{b, l, args[0].getType()};
      Value x = args[0];
      Value one = m.constant(1);
      Value square = m.mul(x, x);
      Value derivative;
      if (tanhForm) {
        Value t = m.tanh(m.tanhInner(x));
        Value left = m.mul(m.add(one, t), 0.5);
        Value tanhDerivative = m.sub(one, m.mul(t, t));
        Value innerDerivative =
            m.mul(m.add(one, m.mul(square, 3 * kTanhKappa)), kTanhBeta);
        Value right =
            m.mul(m.mul(m.mul(x, 0.5), tanhDerivative), innerDerivative);
        derivative = m.add(left, right);
      } else {
        Value erf = m.erf(m.mul(x, kSqrtHalf));
        Value cdf = m.mul(m.add(one, erf), 0.5);
        Value pdf = m.mul(m.exp(m.mul(square, -0.5)), kPdfScale);
        derivative = m.add(cdf, m.mul(x, pdf));
      }
      return m.mul(args[1], derivative);
    };
    rewriter.replaceOp(
        op, createElementwise(rewriter, op.getLoc(), type,
                              ValueRange{adaptor.getInput(), adaptor.getGrad()},
                              [&](OpBuilder &b, Location l, ValueRange args) {
                                return computeInOpmath(b, l,
                                                       type.getElementType(),
                                                       args, geluGrad);
                              }));
    return success();
  }
};

} // namespace

void modelc::populateGeluToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<GeluLowering, GeluGradLowering>(patterns.getContext());
}
