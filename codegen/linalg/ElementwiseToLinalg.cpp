// Lowering of the elementwise mdl ops (arithmetic, math, logic, compare,
// where, cast, constant) to one broadcasting linalg.generic each, with
// PyTorch's scalar semantics in the body.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// `compute` on float operands in PyTorch's opmath type (f32 for halves).
template <typename FloatOp>
Value buildFloatOp(OpBuilder &b, Location loc, ValueRange args) {
  return computeInOpmath(b, loc, args[0].getType(), args,
                         [](OpBuilder &nb, Location nloc, ValueRange wide) {
                           return nb.create<FloatOp>(nloc, wide).getResult();
                         });
}

/// The float, signed or unsigned form of a binary arithmetic op, chosen by
/// the mdl element type `type`.
template <typename FloatOp, typename SignedOp, typename UnsignedOp = SignedOp>
Value buildArithOp(OpBuilder &b, Location loc, ValueRange args, Type type) {
  if (isa<FloatType>(type))
    return buildFloatOp<FloatOp>(b, loc, args);
  if (isZeroExtended(type))
    return b.create<UnsignedOp>(loc, args[0], args[1]);
  return b.create<SignedOp>(loc, args[0], args[1]);
}

/// Integer division and remainder rounding toward -inf (Python's `//` and
/// `%`, torch.floor_divide and torch.remainder): the truncating quotient
/// steps down, and the remainder moves by the divisor, when the remainder is
/// non-zero and its sign differs from the divisor's. PyTorch raises on a
/// zero divisor; a kernel cannot, and the hardware would trap, so x / 0 and
/// x % 0 give 0.
Value buildIntegerDivision(OpBuilder &b, Location loc, ValueRange args,
                           Type type, bool remainder) {
  Value lhs = args[0], rhs = args[1];
  Type signless = lhs.getType();
  Value zero = createScalarConstant(b, loc, signless, 0);
  Value one = createScalarConstant(b, loc, signless, 1);
  Value isZero =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rhs, zero);
  Value divisor = b.create<arith::SelectOp>(loc, isZero, one, rhs);
  Value result;
  if (isZeroExtended(type)) {
    result = remainder ? b.create<arith::RemUIOp>(loc, lhs, divisor).getResult()
                       : b.create<arith::DivUIOp>(loc, lhs, divisor);
  } else {
    Value quotient = b.create<arith::DivSIOp>(loc, lhs, divisor);
    Value rem = b.create<arith::RemSIOp>(loc, lhs, divisor);
    Value nonZero =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, rem, zero);
    Value remNegative =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, rem, zero);
    Value divisorNegative =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, divisor, zero);
    Value signsDiffer =
        b.create<arith::XOrIOp>(loc, remNegative, divisorNegative);
    Value adjust = b.create<arith::AndIOp>(loc, nonZero, signsDiffer);
    Value adjusted =
        remainder ? b.create<arith::AddIOp>(loc, rem, divisor).getResult()
                  : b.create<arith::SubIOp>(loc, quotient, one);
    result = b.create<arith::SelectOp>(loc, adjust, adjusted,
                                       remainder ? rem : quotient);
  }
  return b.create<arith::SelectOp>(loc, isZero, zero, result);
}

/// torch.remainder on floats: fmod, moved by the divisor when its sign
/// differs from the divisor's (ATen's remainder kernel).
Value buildFloatRemainder(OpBuilder &b, Location loc, ValueRange args) {
  return computeInOpmath(
      b, loc, args[0].getType(), args,
      [](OpBuilder &nb, Location nloc, ValueRange wide) -> Value {
        Value rhs = wide[1];
        Value mod = nb.create<arith::RemFOp>(nloc, wide[0], rhs);
        Value zero = createScalarConstant(nb, nloc, mod.getType(), 0);
        Value nonZero = nb.create<arith::CmpFOp>(
            nloc, arith::CmpFPredicate::UNE, mod, zero);
        Value modNegative = nb.create<arith::CmpFOp>(
            nloc, arith::CmpFPredicate::OLT, mod, zero);
        Value rhsNegative = nb.create<arith::CmpFOp>(
            nloc, arith::CmpFPredicate::OLT, rhs, zero);
        Value signsDiffer =
            nb.create<arith::XOrIOp>(nloc, modNegative, rhsNegative);
        Value adjust = nb.create<arith::AndIOp>(nloc, nonZero, signsDiffer);
        Value moved = nb.create<arith::AddFOp>(nloc, mod, rhs);
        return nb.create<arith::SelectOp>(nloc, adjust, moved, mod);
      });
}

/// Integer power as ATen's powi: square-and-multiply over the exponent's
/// bits (wrapping like PyTorch's integer arithmetic); a negative exponent
/// gives 1 for base 1, +-1 for base -1 and 0 otherwise.
Value buildIntegerPower(OpBuilder &b, Location loc, ValueRange args,
                        Type type) {
  Value base = args[0], exponent = args[1];
  Type signless = base.getType();
  unsigned width = signless.getIntOrFloatBitWidth();
  Value zero = createScalarConstant(b, loc, signless, 0);
  Value one = createScalarConstant(b, loc, signless, 1);
  Value lower = b.create<arith::ConstantIndexOp>(loc, 0);
  Value upper = b.create<arith::ConstantIndexOp>(loc, width);
  Value step = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(
      loc, lower, upper, step, ValueRange{one, base, exponent},
      [&](OpBuilder &nb, Location nloc, Value, ValueRange iter) {
        Value bit = nb.create<arith::AndIOp>(nloc, iter[2], one);
        Value odd =
            nb.create<arith::CmpIOp>(nloc, arith::CmpIPredicate::ne, bit, zero);
        Value product = nb.create<arith::MulIOp>(nloc, iter[0], iter[1]);
        Value result = nb.create<arith::SelectOp>(nloc, odd, product, iter[0]);
        Value square = nb.create<arith::MulIOp>(nloc, iter[1], iter[1]);
        Value shifted = nb.create<arith::ShRUIOp>(nloc, iter[2], one);
        nb.create<scf::YieldOp>(nloc, ValueRange{result, square, shifted});
      });
  Value power = loop.getResult(0);
  if (isZeroExtended(type))
    return power;
  Value minusOne = createScalarConstant(b, loc, signless, -1);
  Value negative =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, exponent, zero);
  Value baseIsOne =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, base, one);
  Value baseIsMinusOne =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, base, minusOne);
  Value oddExponent = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ne,
      b.create<arith::AndIOp>(loc, exponent, one), zero);
  Value signOfMinusOne =
      b.create<arith::SelectOp>(loc, oddExponent, minusOne, one);
  Value reciprocal = b.create<arith::SelectOp>(
      loc, baseIsOne, one,
      b.create<arith::SelectOp>(loc, baseIsMinusOne, signOfMinusOne, zero));
  return b.create<arith::SelectOp>(loc, negative, reciprocal, power);
}

/// 1 / (1 + exp(-x)), ATen's sigmoid, in opmath.
Value buildSigmoid(OpBuilder &b, Location loc, Value x, bool timesInput) {
  return computeInOpmath(
      b, loc, x.getType(), x,
      [timesInput](OpBuilder &nb, Location nloc, ValueRange wide) -> Value {
        Value one = createScalarConstant(nb, nloc, wide[0].getType(), 1);
        Value negated = nb.create<arith::NegFOp>(nloc, wide[0]);
        Value denominator = nb.create<arith::AddFOp>(
            nloc, one, nb.create<math::ExpOp>(nloc, negated));
        // silu is x / (1 + exp(-x)) in ATen, not x * sigmoid(x).
        return nb.create<arith::DivFOp>(nloc, timesInput ? wide[0] : one,
                                        denominator);
      });
}

/// Comparisons: floats ordered except `ne`, which holds for NaN (IEEE and
/// PyTorch); unsigned integers and bools unsigned (false < true).
Value buildCompare(OpBuilder &b, Location loc, mlir::mdl::CmpPredicate kind,
                   ValueRange args, Type type) {
  using mlir::mdl::CmpPredicate;
  if (isa<FloatType>(type)) {
    arith::CmpFPredicate predicate;
    switch (kind) {
    case CmpPredicate::eq:
      predicate = arith::CmpFPredicate::OEQ;
      break;
    case CmpPredicate::ne:
      predicate = arith::CmpFPredicate::UNE;
      break;
    case CmpPredicate::lt:
      predicate = arith::CmpFPredicate::OLT;
      break;
    case CmpPredicate::le:
      predicate = arith::CmpFPredicate::OLE;
      break;
    case CmpPredicate::gt:
      predicate = arith::CmpFPredicate::OGT;
      break;
    case CmpPredicate::ge:
      predicate = arith::CmpFPredicate::OGE;
      break;
    }
    return b.create<arith::CmpFOp>(loc, predicate, args[0], args[1]);
  }
  bool isUnsigned = isZeroExtended(type);
  arith::CmpIPredicate predicate;
  switch (kind) {
  case CmpPredicate::eq:
    predicate = arith::CmpIPredicate::eq;
    break;
  case CmpPredicate::ne:
    predicate = arith::CmpIPredicate::ne;
    break;
  case CmpPredicate::lt:
    predicate =
        isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
    break;
  case CmpPredicate::le:
    predicate =
        isUnsigned ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
    break;
  case CmpPredicate::gt:
    predicate =
        isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
    break;
  case CmpPredicate::ge:
    predicate =
        isUnsigned ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
    break;
  }
  return b.create<arith::CmpIOp>(loc, predicate, args[0], args[1]);
}

// The scalar body of each op. `type` is the mdl element type of the values
// combined (the last operand's: `where`'s condition comes first).
using namespace mlir::mdl;

Value buildScalar(AddOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  return buildArithOp<arith::AddFOp, arith::AddIOp>(b, loc, a, t);
}
Value buildScalar(SubOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  return buildArithOp<arith::SubFOp, arith::SubIOp>(b, loc, a, t);
}
Value buildScalar(MulOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  return buildArithOp<arith::MulFOp, arith::MulIOp>(b, loc, a, t);
}
Value buildScalar(DivOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  if (isa<FloatType>(t))
    return buildFloatOp<arith::DivFOp>(b, loc, a);
  return buildIntegerDivision(b, loc, a, t, /*remainder=*/false);
}
Value buildScalar(RemOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  if (isa<FloatType>(t))
    return buildFloatRemainder(b, loc, a);
  return buildIntegerDivision(b, loc, a, t, /*remainder=*/true);
}
Value buildScalar(PowOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  if (isa<FloatType>(t))
    return buildFloatOp<math::PowFOp>(b, loc, a);
  return buildIntegerPower(b, loc, a, t);
}
// maximumf/minimumf propagate NaN, as torch.maximum/minimum do.
Value buildScalar(MaximumOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  return buildArithOp<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(b, loc,
                                                                         a, t);
}
Value buildScalar(MinimumOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  return buildArithOp<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(b, loc,
                                                                         a, t);
}
Value buildScalar(AndOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return b.create<arith::AndIOp>(loc, a[0], a[1]);
}
Value buildScalar(OrOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return b.create<arith::OrIOp>(loc, a[0], a[1]);
}
Value buildScalar(WhereOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return b.create<arith::SelectOp>(loc, a[0], a[1], a[2]);
}
Value buildScalar(NegOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  if (isa<FloatType>(t))
    return b.create<arith::NegFOp>(loc, a[0]);
  // Unsigned negation wraps (0 - x), as PyTorch's uint8.
  Value zero = createScalarConstant(b, loc, a[0].getType(), 0);
  return b.create<arith::SubIOp>(loc, zero, a[0]);
}
Value buildScalar(AbsOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  if (isa<FloatType>(t))
    return b.create<math::AbsFOp>(loc, a[0]);
  return b.create<math::AbsIOp>(loc, a[0]);
}
// relu is max(x, 0) with NaN propagated (ATen's clamp_min).
Value buildScalar(ReluOp, OpBuilder &b, Location loc, ValueRange a, Type t) {
  Value zero = createScalarConstant(b, loc, a[0].getType(), 0);
  if (isa<FloatType>(t))
    return b.create<arith::MaximumFOp>(loc, a[0], zero);
  return b.create<arith::MaxSIOp>(loc, a[0], zero);
}
Value buildScalar(ExpOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return buildFloatOp<math::ExpOp>(b, loc, a);
}
Value buildScalar(LogOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return buildFloatOp<math::LogOp>(b, loc, a);
}
Value buildScalar(SqrtOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return buildFloatOp<math::SqrtOp>(b, loc, a);
}
Value buildScalar(RsqrtOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return buildFloatOp<math::RsqrtOp>(b, loc, a);
}
Value buildScalar(TanhOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return buildFloatOp<math::TanhOp>(b, loc, a);
}
Value buildScalar(SigmoidOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return buildSigmoid(b, loc, a[0], /*timesInput=*/false);
}
Value buildScalar(SiluOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  return buildSigmoid(b, loc, a[0], /*timesInput=*/true);
}
Value buildScalar(NotOp, OpBuilder &b, Location loc, ValueRange a, Type) {
  Value allOnes = createScalarConstant(b, loc, a[0].getType(), 1);
  return b.create<arith::XOrIOp>(loc, a[0], allOnes);
}
Value buildScalar(CompareOp op, OpBuilder &b, Location loc, ValueRange a,
                  Type t) {
  return buildCompare(b, loc, op.getPredicate(), a, t);
}

/// Any op above: one linalg.generic over the result, operands broadcast.
template <typename OpTy>
struct ElementwiseLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Operation *operation = op.getOperation();
    Type type = getElementTypeOrSelf(operation->getOperands().back());
    // relu and abs are the identity on unsigned integers: no copy.
    if (isa<ReluOp, AbsOp>(operation) && isZeroExtended(type)) {
      rewriter.replaceOp(op, adaptor.getOperands().front());
      return success();
    }
    auto resultType = getSignlessTensorType(operation->getResult(0).getType());
    Value result = createElementwiseOp(
        rewriter, op.getLoc(), resultType, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return buildScalar(op, b, loc, args, type);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Tensor.to(dtype), element by element (see convertScalar).
struct CastLowering : OpConversionPattern<CastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type from = op.getInput().getType().getElementType();
    Type to = op.getType().getElementType();
    if (from == to) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Value result = createElementwiseOp(
        rewriter, op.getLoc(), getSignlessTensorType(op.getType()),
        adaptor.getInput(), [&](OpBuilder &b, Location loc, ValueRange args) {
          return convertScalar(b, loc, args[0], from, to);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A dense constant keeps its bits with a signless element type (ui8 data
/// becomes i8). A splat becomes a linalg.fill of its scalar: as a dense
/// tensor it would bufferize to a global of that size (the zeros that reset
/// a [50257, 768] gradient would take 154 MB of the executable); users'
/// loop bodies read the scalar instead (getSplatValue), and a stored splat
/// fills the buffer in place (LowerToLinalg.cpp).
struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return op.emitError("only dense constants can be lowered, got ")
             << op.getValue();
    Type signless = getSignlessType(dense.getElementType());
    if (signless != dense.getElementType())
      dense = dense.bitcast(signless);
    if (!dense.isSplat()) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, dense);
      return success();
    }
    Value scalar = rewriter.create<arith::ConstantOp>(
        op.getLoc(), cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    rewriter.replaceOp(op,
                       createFilledTensor(rewriter, op.getLoc(),
                                          dense.getType().getShape(), scalar));
    return success();
  }
};

} // namespace

void modelc::populateElementwiseToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
               ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
               ElementwiseLowering<RemOp>, ElementwiseLowering<PowOp>,
               ElementwiseLowering<MaximumOp>, ElementwiseLowering<MinimumOp>,
               ElementwiseLowering<AndOp>, ElementwiseLowering<OrOp>,
               ElementwiseLowering<CompareOp>, ElementwiseLowering<WhereOp>,
               ElementwiseLowering<NegOp>, ElementwiseLowering<AbsOp>,
               ElementwiseLowering<ReluOp>, ElementwiseLowering<ExpOp>,
               ElementwiseLowering<LogOp>, ElementwiseLowering<SqrtOp>,
               ElementwiseLowering<RsqrtOp>, ElementwiseLowering<TanhOp>,
               ElementwiseLowering<SigmoidOp>, ElementwiseLowering<SiluOp>,
               ElementwiseLowering<NotOp>, CastLowering, ConstantLowering>(
      patterns.getContext());
}
