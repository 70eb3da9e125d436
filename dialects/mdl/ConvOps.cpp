// Windowed NCHW ops: conv2d, max_pool2d and avg_pool2d.
#include "dialects/mdl/MdlOps.h"

#include "dialects/mdl/ShapeRules.h"

#include "mlir/IR/Builders.h"

#include <limits>

using namespace mlir;
using namespace mlir::mdl;
namespace shape_rules = modelc::shape_rules;

/// Checks that `values` (named `name`) has an entry for H and W, each at
/// least `min`.
static bool isValidPair(StringRef name, ArrayRef<int64_t> values, int64_t min,
                        EmitErrorFn emitError) {
  if (values.size() != 2) {
    reportInvalid(emitError, name, " must have 2 entries (H, W), got ",
                  values.size());
    return false;
  }
  if (values[0] < min || values[1] < min) {
    reportInvalid(emitError, name, " must be ",
                  min == 0 ? "non-negative" : "positive", ", got ",
                  formatShape(values));
    return false;
  }
  return true;
}

static constexpr const char *kAxisNames[] = {"H", "W"};

/// Checks that the padded input size `size + 2 * padding` and the dilated
/// kernel extent `dilation * (kernel - 1) + 1` of axis `axis` fit in int64,
/// so that the window count can be computed (and lowered) without overflow.
static bool checkWindowExtents(int64_t size, int64_t kernel, int64_t padding,
                               int64_t dilation, int axis,
                               EmitErrorFn emitError) {
  constexpr shape_rules::WideSize kMax = std::numeric_limits<int64_t>::max();
  constexpr shape_rules::WideSize kMin = std::numeric_limits<int64_t>::min();
  shape_rules::WideSize padded = shape_rules::getPaddedSize(size, padding);
  if (padded < kMin || padded > kMax) {
    reportInvalid(emitError, "input size ", size, " padded by ", padding,
                  " on axis ", kAxisNames[axis], " does not fit in int64");
    return false;
  }
  shape_rules::WideSize extent =
      shape_rules::getDilatedExtent(kernel, dilation);
  if (extent < kMin || extent > kMax) {
    reportInvalid(emitError, "kernel ", kernel, " with dilation ", dilation,
                  " on axis ", kAxisNames[axis],
                  " spans more elements than fit in int64");
    return false;
  }
  return true;
}

std::optional<SmallVector<int64_t>>
mlir::mdl::inferConv2dShape(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                            ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                            ArrayRef<int64_t> dilation, int64_t groups,
                            EmitErrorFn emitError) {
  if (input.size() != 4)
    return reportInvalid(emitError, "input must be 4-D [N, C, H, W], got ",
                         formatShape(input));
  if (weight.size() != 4)
    return reportInvalid(emitError,
                         "weight must be 4-D [O, C / groups, kH, kW], got ",
                         formatShape(weight));
  if (!isValidPair("stride", stride, 1, emitError) ||
      !isValidPair("padding", padding, 0, emitError) ||
      !isValidPair("dilation", dilation, 1, emitError))
    return std::nullopt;
  if (groups < 1)
    return reportInvalid(emitError, "groups must be positive, got ", groups);
  int64_t channels = input[1];
  int64_t outChannels = weight[0];
  if (channels % groups != 0)
    return reportInvalid(emitError, "input channels ", channels,
                         " are not divisible by groups ", groups);
  if (outChannels % groups != 0)
    return reportInvalid(emitError, "output channels ", outChannels,
                         " are not divisible by groups ", groups);
  if (weight[1] != channels / groups)
    return reportInvalid(emitError, "weight has ", weight[1],
                         " input channels per group, expected ",
                         channels / groups, " (input channels ", channels,
                         " / groups ", groups, ")");
  SmallVector<int64_t> result = {input[0], outChannels};
  for (int i = 0; i < 2; ++i) {
    if (!checkWindowExtents(input[2 + i], weight[2 + i], padding[i],
                            dilation[i], i, emitError))
      return std::nullopt;
    std::optional<int64_t> count = inferWindowCount(
        input[2 + i], weight[2 + i], stride[i], padding[i], dilation[i]);
    if (!count)
      return reportInvalid(
          emitError, "kernel ", weight[2 + i], " with dilation ", dilation[i],
          " does not fit the input size ", input[2 + i], " padded by ",
          padding[i], " on axis ", kAxisNames[i]);
    result.push_back(*count);
  }
  return result;
}

void Conv2dOp::build(OpBuilder &builder, OperationState &state, Value input,
                     Value weight, Value bias, ArrayRef<int64_t> stride,
                     ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                     int64_t groups) {
  auto inputType = cast<RankedTensorType>(input.getType());
  std::optional<SmallVector<int64_t>> shape = inferConv2dShape(
      inputType.getShape(), cast<RankedTensorType>(weight.getType()).getShape(),
      stride, padding, dilation, groups);
  build(builder, state, shape ? inputType.clone(*shape) : inputType, input,
        weight, bias, stride, padding, dilation, groups);
}

LogicalResult Conv2dOp::verify() {
  RankedTensorType input = getInput().getType();
  ArrayRef<int64_t> weight = getWeight().getType().getShape();
  std::optional<SmallVector<int64_t>> shape = inferConv2dShape(
      input.getShape(), weight, getStride(), getPadding(), getDilation(),
      getGroups(), [&] { return emitOpError(); });
  if (!shape)
    return failure();
  if (Value bias = getBias()) {
    ArrayRef<int64_t> biasShape =
        cast<RankedTensorType>(bias.getType()).getShape();
    if (biasShape != ArrayRef<int64_t>{weight[0]})
      return emitOpError("bias must have shape [")
             << weight[0] << "] (the output channels), got "
             << formatShape(biasShape);
  }
  return verifyTensorType(*this, "result", getType(), *shape,
                          input.getElementType());
}

LogicalResult ConvTranspose2dOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> weight = getWeight().getType().getShape();
  ArrayRef<int64_t> result = getType().getShape();
  if (input.size() != 4 || weight.size() != 4 || result.size() != 4)
    return emitOpError("input, weight and result must be 4-D");
  int64_t groups = getGroups();
  if (groups < 1 || weight[0] % groups != 0 || weight[0] != input[1])
    return emitOpError("weight must be [C, O / groups, kH, kW] with C = ")
           << input[1] << " (the input channels) divisible by groups = "
           << groups << ", got " << formatShape(weight);
  if (result[0] != input[0] || result[1] != weight[1] * groups)
    return emitOpError("result must be [")
           << input[0] << ", " << weight[1] * groups << ", Ho, Wo], got "
           << formatShape(result);
  // The result is the input of a conv2d whose output has the input's shape;
  // what that conv2d never reads is the output padding (below the stride).
  std::optional<SmallVector<int64_t>> back = inferConv2dShape(
      result, weight, getStride(), getPadding(), getDilation(), groups,
      [&] { return emitOpError(); });
  if (!back)
    return failure();
  if (ArrayRef<int64_t>(*back) != input)
    return emitOpError("result ")
           << formatShape(result) << " is not a transposed convolution of "
           << formatShape(input) << " by " << formatShape(weight);
  if (Value bias = getBias())
    if (cast<RankedTensorType>(bias.getType()).getShape() !=
        ArrayRef<int64_t>{result[1]})
      return emitOpError("bias must have shape [")
             << result[1] << "] (the output channels)";
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
mlir::mdl::inferPool2dShape(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                            ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                            EmitErrorFn emitError) {
  if (input.size() != 4)
    return reportInvalid(emitError, "input must be 4-D [N, C, H, W], got ",
                         formatShape(input));
  if (!isValidPair("kernel", kernel, 1, emitError) ||
      !isValidPair("stride", stride, 1, emitError) ||
      !isValidPair("padding", padding, 0, emitError))
    return std::nullopt;
  SmallVector<int64_t> result = {input[0], input[1]};
  for (int i = 0; i < 2; ++i) {
    // PyTorch rejects windows that could lie entirely in the padding.
    if (padding[i] > kernel[i] / 2)
      return reportInvalid(emitError, "padding ", padding[i], " on axis ",
                           kAxisNames[i],
                           " must be at most half the kernel size ", kernel[i]);
    if (!checkWindowExtents(input[2 + i], kernel[i], padding[i],
                            /*dilation=*/1, i, emitError))
      return std::nullopt;
    std::optional<int64_t> count =
        inferWindowCount(input[2 + i], kernel[i], stride[i], padding[i]);
    if (!count)
      return reportInvalid(
          emitError, "kernel ", kernel[i], " does not fit the input size ",
          input[2 + i], " padded by ", padding[i], " on axis ", kAxisNames[i]);
    result.push_back(*count);
  }
  return result;
}

Type mlir::mdl::inferPool2dType(Type input, ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> stride,
                                ArrayRef<int64_t> padding) {
  auto type = cast<RankedTensorType>(input);
  std::optional<SmallVector<int64_t>> shape =
      inferPool2dShape(type.getShape(), kernel, stride, padding);
  return shape ? type.clone(*shape) : type;
}

LogicalResult mlir::mdl::verifyPool2dOp(Operation *op, ArrayRef<int64_t> kernel,
                                        ArrayRef<int64_t> stride,
                                        ArrayRef<int64_t> padding) {
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  std::optional<SmallVector<int64_t>> shape =
      inferPool2dShape(input.getShape(), kernel, stride, padding,
                       [&] { return op->emitOpError(); });
  if (!shape)
    return failure();
  return verifyTensorType(op, "result", op->getResult(0).getType(), *shape,
                          input.getElementType());
}
