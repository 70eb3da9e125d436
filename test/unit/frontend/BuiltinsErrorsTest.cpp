// The built-ins' error messages and where they point: at the offending
// argument when there is one, else at the call or operator.
#include "BuiltinsTestFixture.h"

#include <cstdint>

namespace modelc::test {
namespace {

using BinOp = ast::BinaryExpr::Op;
using K = ast::IndexItem::Kind;

TEST_F(BuiltinsTest, ReportsArgumentBindingErrors) {
  Arg dim = i(1, "dim");
  expectError(call("softmax", {f32({2}), dim}), dim.loc,
              "'softmax' has no parameter 'dim'; its parameters are x, axis");
  Arg again = i(0, "axis");
  expectError(call("softmax", {f32({2}), i(1), again}), again.loc,
              "'softmax' got two values for 'axis'");
  expectError(call("conv2d", {f32({1, 1, 4, 4})}), callLoc,
              "'conv2d' is missing argument 'w': conv2d(x, w, b?, stride = 1, "
              "padding = 0, dilation = 1, groups = 1)");
  Arg extra = i(1);
  expectError(call("relu", {f32({2}), extra}), extra.loc,
              "'relu' takes 1 argument, got 2: relu(x)");
  Arg late = f32({2});
  expectError(call("pow", {i(2, "p"), late}), late.loc,
              "'pow': positional argument after a keyword argument");
  expectError(
      call("argmax", {f32({2, 3})}), callLoc,
      "'argmax' is missing argument 'axis': argmax(x, axis, keepdim = false)");
  expectError(call("nope", {}), callLoc, "'nope' is not a built-in operation");
}

TEST_F(BuiltinsTest, ReportsArgumentKinds) {
  Arg axis = f(1.5, "axis");
  expectError(call("softmax", {f32({2}), axis}), axis.loc,
              "'softmax' expects an int for 'axis', got float 1.5");
  Arg three = i(3);
  expectError(call("sum", {three}), three.loc,
              "'sum' expects a tensor for 'x', got int 3");
  Arg ids = tensor(DType::I32, {4});
  expectError(
      call("exp", {ids}), ids.loc,
      "'exp' needs a float tensor for 'x', got i32[4]; convert with f32(...)");
  Arg keep = i(1, "keepdim");
  expectError(call("sum", {f32({2}), keep}), keep.loc,
              "'sum' expects a bool for 'keepdim', got int 1");
  Arg stride = ints({1, 2, 3}, "stride");
  expectError(call("conv2d", {f32({1, 1, 4, 4}), f32({1, 1, 3, 3}), stride}),
              stride.loc,
              "'conv2d' expects an int or a list of two ints for 'stride', got "
              "list [1, 2, 3]");
  Arg mode = s("erf", "approximate");
  expectError(
      call("gelu", {f32({2}), mode}), mode.loc,
      "'gelu' expects 'approximate' to be \"none\" or \"tanh\", got \"erf\"");
  Arg text = s("x");
  expectError(call("sqrt", {text}), text.loc,
              "'sqrt' expects a tensor or a number for 'x', got string \"x\"");
}

TEST_F(BuiltinsTest, ReportsAxesOutOfRange) {
  Arg axis = i(2, "axis");
  expectError(
      call("softmax", {f32({2, 3}), axis}), axis.loc,
      "'softmax' 'axis' = 2 is out of range for f32[2, 3] (valid: -2 to 1)");
  Arg twice = ints({0, -2}, "axis");
  expectError(call("sum", {f32({2, 3}), twice}), twice.loc,
              "'sum' got axis 0 twice in 'axis'");
  Arg none = ints({}, "axis");
  expectError(
      call("mean", {f32({2, 3}), none}), none.loc,
      "'mean' needs at least one axis in 'axis'; omit it to reduce all");
  Arg scalarAxis = i(0);
  expectError(call("argmax", {f32({}), scalarAxis}), scalarAxis.loc,
              "'argmax' 'axis' = 0 is out of range for f32[] (a scalar tensor "
              "has no axes)");
  Arg flags = tensor(DType::Bool, {3});
  expectError(call("max", {flags}), flags.loc,
              "'max' needs a numeric tensor for 'x', got bool[3]; convert with "
              "i32(...)");
  Arg ints32 = tensor(DType::I32, {3});
  expectError(
      call("mean", {ints32}), ints32.loc,
      "'mean' needs a float tensor for 'x', got i32[3]; convert with f32(...)");
}

TEST_F(BuiltinsTest, ReportsElementTypeMismatches) {
  expectError(binary(BinOp::Add, f32({2}), tensor(DType::I32, {2})), callLoc,
              "'+' needs operands of one element type, got f32[2] and i32[2]; "
              "convert with f32(...)");
  Arg divisor = f(255.0);
  expectError(binary(BinOp::Div, tensor(DType::U8, {28}), divisor), divisor.loc,
              "'/' cannot combine float 255.0 with u8[28]: a float scalar "
              "needs a float tensor; convert the tensor with f32(...)");
  Arg big = i(300);
  expectError(
      binary(BinOp::Add, tensor(DType::U8, {2}), big), big.loc,
      "'+' cannot combine int 300 with u8[2]: 300 is out of range for u8");
  expectError(
      binary(BinOp::Div, tensor(DType::I32, {2}), tensor(DType::I32, {2})),
      callLoc,
      "'/' needs float tensors, got i32[2] and i32[2]; convert with f32(...)");
  expectError(
      binary(BinOp::Add, tensor(DType::Bool, {2}), tensor(DType::Bool, {2})),
      callLoc,
      "'+' cannot do arithmetic on bool tensors, got bool[2] and bool[2]; "
      "convert with i32(...) or use '&&' / '||'");
  expectError(binary(BinOp::And, f32({2}), f32({2})), callLoc,
              "'&&' needs bool tensors, got f32[2] and f32[2]; compare first, "
              "e.g. x > 0");
  Arg x = f32({2});
  expectError(unary(ast::UnaryExpr::Op::Not, x), x.loc,
              "'!' needs a bool tensor, got f32[2]");
  Arg one = i(1);
  expectError(binary(BinOp::Eq, tensor(DType::Bool, {2}), one), one.loc,
              "'==' cannot combine int 1 with bool[2]; use true or false");
  expectError(binary(BinOp::Add, f32({2, 3}), f32({4})), callLoc,
              "'+' cannot broadcast f32[2, 3] and f32[4]: each trailing "
              "dimension must match or be 1");
  Arg label = s("a");
  expectError(binary(BinOp::Mul, f32({2}), label), label.loc,
              "'*' expects a tensor or a number, got string \"a\"");
}

TEST_F(BuiltinsTest, ReportsElementwiseBuiltinErrors) {
  Arg cond = f32({2});
  expectError(call("where", {cond, f32({2}), f32({2})}), cond.loc,
              "'where' expects a bool tensor for 'c', got f32[2]");
  Arg exponent = i(-1);
  expectError(call("pow", {tensor(DType::I32, {2}), exponent}), exponent.loc,
              "'pow' cannot raise integers to a negative power, got int -1; "
              "convert with f32(...)");
  Arg flags = tensor(DType::Bool, {2});
  expectError(call("neg", {flags}), flags.loc,
              "'neg' needs a numeric tensor for 'x', got bool[2]; convert with "
              "f32(...)");
  expectError(call("sqrt", {f(-1.0)}), callLoc,
              "'sqrt' of float -1.0 is not a finite number");
  Arg huge = f(1e300);
  expectError(call("i32", {huge}), huge.loc,
              "'i32' cannot convert float 1e+300 to an integer");
}

TEST_F(BuiltinsTest, ReportsFoldingErrors) {
  expectError(binary(BinOp::Div, i(1), i(0)), callLoc,
              "division by zero in 1 / 0");
  expectError(binary(BinOp::Mod, i(5), i(0)), callLoc,
              "division by zero in 5 % 0");
  expectError(binary(BinOp::Div, f(1.0), f(0.0)), callLoc,
              "division by zero in 1.0 / 0.0");
  expectError(binary(BinOp::Add, i(INT64_MAX), i(1)), callLoc,
              "'+' overflows int64 in 9223372036854775807 and 1");
  expectError(call("pow", {i(2), i(63)}), callLoc,
              "'pow' overflows int64 in pow(2, 63)");
  Arg one = i(1);
  expectError(binary(BinOp::And, one, b(true)), one.loc,
              "'&&' needs bools, got int 1");
  expectError(binary(BinOp::Sub, s("a"), s("b")), callLoc,
              "'-' cannot apply to string \"a\" and string \"b\"");
  expectError(binary(BinOp::MatMul, i(2), i(3)), callLoc,
              "'@' cannot apply to int 2 and int 3");
  Arg three = i(3);
  expectError(unary(ast::UnaryExpr::Op::Not, three), three.loc,
              "'!' needs a bool, got int 3");
}

TEST_F(BuiltinsTest, ReportsShapeErrors) {
  Arg shape = ints({4, 2});
  expectError(
      call("reshape", {f32({2, 3}), shape}), shape.loc,
      "'reshape' cannot reshape f32[2, 3] (6 elements) to [4, 2] (8 elements)");
  shape = ints({4, -1});
  expectError(call("reshape", {f32({2, 3}), shape}), shape.loc,
              "'reshape' cannot reshape f32[2, 3] (6 elements) to [4, -1]: 6 "
              "is not a multiple of 4");
  shape = ints({-1, -1});
  expectError(call("reshape", {f32({2, 3}), shape}), shape.loc,
              "'reshape' allows one -1 in 'shape', got [-1, -1]");
  Arg perm = ints({0, 0, 1});
  expectError(call("transpose", {f32({2, 3, 4}), perm}), perm.loc,
              "'transpose' 'perm' [0, 0, 1] is not a permutation: axis 0 "
              "appears twice");
  Arg vec = f32({3});
  expectError(call("transpose", {vec}), vec.loc,
              "'transpose' without 'perm' swaps the last two axes and needs at "
              "least 2, got f32[3]");
  Arg parts = list({f32({2, 3}), f32({3, 3})});
  expectError(call("concat", {parts, i(1)}), parts.loc,
              "'concat' cannot join f32[2, 3] and f32[3, 3] along axis 1: "
              "other dimensions must be equal");
  Arg n = i(4);
  expectError(
      call("split", {f32({2, 6}), n, i(-1, "axis")}), n.loc,
      "'split' cannot split axis 1 of f32[2, 6] (size 6) into 4 equal parts");
  shape = ints({2, 4});
  expectError(call("broadcast_to", {f32({3}), shape}), shape.loc,
              "'broadcast_to' cannot broadcast f32[3] to [2, 4]");
  Arg zero = i(0);
  expectError(call("arange", {zero}), zero.loc,
              "'arange' needs 'n' from 1 to 2147483647, got 0");
}

TEST_F(BuiltinsTest, ReportsIndexingErrors) {
  Arg x = f32({2, 3});
  IndexSpec single{K::Single, nextLoc(), 0, {}, {}, {}};
  IndexSpec extra{K::Single, nextLoc(), 0, {}, {}, {}};
  expectError(applyIndex(x, {single, single, extra}, nextLoc(), builder),
              extra.loc, "too many indices for f32[2, 3]: 2 axes");
  IndexSpec far{K::Single, nextLoc(), 3, {}, {}, {}};
  expectError(applyIndex(x, {single, far}, nextLoc(), builder), far.loc,
              "index 3 is out of range for axis 1 of f32[2, 3] (size 3)");
  IndexSpec zeroStep{K::Slice, nextLoc(), {}, {}, {}, 0};
  expectError(applyIndex(x, {zeroStep}, nextLoc(), builder), zeroStep.loc,
              "slice step must be positive, got 0");
  IndexSpec empty{K::Slice, nextLoc(), {}, 2, 1, {}};
  expectError(applyIndex(x, {single, empty}, nextLoc(), builder), empty.loc,
              "slice 2:1 selects nothing from axis 1 of f32[2, 3] (size 3)");
  IndexSpec dots{K::Ellipsis, nextLoc(), {}, {}, {}, {}};
  IndexSpec moreDots{K::Ellipsis, nextLoc(), {}, {}, {}, {}};
  expectError(applyIndex(x, {dots, moreDots}, nextLoc(), builder), moreDots.loc,
              "an index may contain '...' only once");
  IndexSpec past{K::Single, nextLoc(), 3, {}, {}, {}};
  expectError(applyIndex(ints({1, 2, 3}), {past}, nextLoc(), builder), past.loc,
              "index 3 is out of range for a list of 3 elements");
  Arg number = i(7);
  expectError(applyIndex(number, {single}, nextLoc(), builder), number.loc,
              "cannot index int 7: only tensors and lists can be indexed");
}

TEST_F(BuiltinsTest, ReportsMatmulErrors) {
  expectError(binary(BinOp::MatMul, f32({128, 784}), f32({256, 10})), callLoc,
              "'matmul' cannot multiply f32[128, 784] by f32[256, 10]: inner "
              "dimensions 784 and 256 differ");
  expectError(binary(BinOp::MatMul, f32({2, 3, 4}), f32({5, 4, 6})), callLoc,
              "'matmul' cannot broadcast the batch dimensions [2] and [5] of "
              "f32[2, 3, 4] and f32[5, 4, 6]");
  expectError(binary(BinOp::MatMul, tensor(DType::I32, {2, 2}),
                     tensor(DType::I32, {2, 2})),
              callLoc,
              "'matmul' needs float operands of one element type, got i32[2, "
              "2] and i32[2, 2]");
  Arg two = f(2.0);
  expectError(binary(BinOp::MatMul, f32({2, 2}), two), two.loc,
              "'matmul' needs tensors, got float 2.0; use '*' to scale");
}

TEST_F(BuiltinsTest, ReportsConvAndPoolErrors) {
  Arg w = f32({16, 4, 5, 5});
  expectError(call("conv2d", {f32({8, 3, 32, 32}), w}), w.loc,
              "'conv2d' expects 'w' of shape [16, 3, kh, kw] for x f32[8, 3, "
              "32, 32] with groups = 1, got f32[16, 4, 5, 5]");
  Arg groups = i(2, "groups");
  expectError(call("conv2d", {f32({8, 3, 32, 32}), f32({16, 1, 5, 5}), groups}),
              groups.loc,
              "'conv2d' needs 'groups' to divide the 3 input and 16 output "
              "channels, got 2");
  w = f32({4, 1, 7, 7});
  expectError(call("conv2d", {f32({1, 1, 5, 5}), w}), w.loc,
              "'conv2d' output is empty: kernel f32[4, 1, 7, 7] with dilation "
              "[1, 1] does not fit x f32[1, 1, 5, 5] padded by [0, 0]");
  Arg bias = f32({8});
  expectError(
      call("conv2d", {f32({1, 1, 5, 5}), f32({4, 1, 3, 3}), bias}), bias.loc,
      "'conv2d' expects 'b' of shape [4] for w f32[4, 1, 3, 3], got f32[8]");
  Arg stride = i(0, "stride");
  expectError(call("conv2d", {f32({1, 1, 5, 5}), f32({4, 1, 3, 3}), stride}),
              stride.loc,
              "'conv2d' needs 'stride' from 1 to 2147483647, got int 0");
  Arg x = f32({28, 28});
  expectError(call("conv2d", {x, f32({4, 1, 3, 3})}), x.loc,
              "'conv2d' expects 'x' of rank 4 [n, c, h, w], got f32[28, 28]");
  Arg half = tensor(DType::F16, {4, 1, 3, 3});
  expectError(call("conv2d", {f32({1, 1, 5, 5}), half}), half.loc,
              "'conv2d' needs 'w' of element type f32 like the input, got "
              "f16[4, 1, 3, 3]");
  Arg padding = i(2, "padding");
  expectError(call("max_pool2d", {f32({1, 1, 8, 8}), i(2), padding}),
              padding.loc,
              "'max_pool2d' needs 'padding' of at most half the kernel [2, 2], "
              "got [2, 2]");
}

TEST_F(BuiltinsTest, ReportsNNAndLossErrors) {
  Arg w = f32({4});
  expectError(
      call("layer_norm", {f32({2, 8}), w, f32({8})}), w.loc,
      "'layer_norm' expects 'w' of shape [8] for x f32[2, 8], got f32[4]");
  Arg eps = f(0.0, "eps");
  expectError(call("layer_norm", {f32({2, 8}), f32({8}), f32({8}), eps}),
              eps.loc, "'layer_norm' needs a positive 'eps', got float 0.0");
  Arg ids = f32({4});
  expectError(
      call("embedding", {ids, f32({10, 3})}), ids.loc,
      "'embedding' needs integer 'ids', got f32[4]; convert with i32(...)");
  Arg p = f(1.5);
  expectError(call("dropout", {f32({4}), p}), p.loc,
              "'dropout' needs 'p' in [0, 1), got float 1.5");
  Arg k = f32({2, 4, 8, 32});
  expectError(call("attention", {f32({2, 4, 16, 64}), k, f32({2, 4, 8, 64})}),
              k.loc,
              "'attention' expects 'k' of shape [2, 4, s, 64] for q f32[2, 4, "
              "16, 64], got f32[2, 4, 8, 32]");
  Arg labels = f32({128});
  expectError(call("cross_entropy", {f32({128, 10}), labels}), labels.loc,
              "'cross_entropy' needs integer class indices for 'labels', got "
              "f32[128]; convert with i32(...)");
  labels = tensor(DType::I32, {128, 1});
  expectError(call("cross_entropy", {f32({128, 10}), labels}), labels.loc,
              "'cross_entropy' expects 'labels' of shape [128] for logits "
              "f32[128, 10], got i32[128, 1]");
  Arg target = f32({3, 1});
  expectError(call("mse_loss", {f32({3}), target}), target.loc,
              "'mse_loss' needs 'b' of the type of a (f32[3]), got f32[3, 1]");
  expectError(
      call("accuracy", {f32({128, 10}), tensor(DType::U8, {128})}), callLoc,
      "'accuracy' is a metric: use it in `metrics { }`");
}

// Every built-in whose result can outgrow its operands checks that the
// result's sizes and element count fit in int64, as declared types must.
TEST_F(BuiltinsTest, ReportsResultsWithTooManyElements) {
  const int64_t g = 1000000000, t40 = int64_t(1) << 40;
  Arg shape = ints({g, g, g, 2, 3});
  expectError(call("broadcast_to", {f32({2, 3}), shape}), shape.loc,
              "'broadcast_to' result shape [1000000000, 1000000000, "
              "1000000000, 2, 3] has too many elements");
  const int64_t half = int64_t(1) << 62;
  expectError(call("concat", {list({f32({half}), f32({half})})}), callLoc,
              "'concat' result shape [9223372036854775808] has too many "
              "elements");
  const int64_t k60 = int64_t(1) << 60;
  expectError(call("concat", {list({f32({k60, 6}), f32({k60, 6})})}), callLoc,
              "'concat' result shape [2305843009213693952, 6] has too many "
              "elements");
  expectError(binary(BinOp::Add, f32({t40, 1}), f32({t40})), callLoc,
              "'+' result shape [1099511627776, 1099511627776] has too many "
              "elements");
  expectError(call("where", {tensor(DType::Bool, {t40, 1}), f32({t40}), f(0)}),
              callLoc,
              "'where' result shape [1099511627776, 1099511627776] has too "
              "many elements");
  expectError(binary(BinOp::MatMul, f32({t40, 1}), f32({1, t40})), callLoc,
              "'matmul' result shape [1099511627776, 1099511627776] has too "
              "many elements");
  expectError(
      binary(BinOp::MatMul, f32({t40, 1, 2, 2}), f32({t40, 2, 2})), callLoc,
      "'matmul' result shape [1099511627776, 1099511627776, 2, 2] has too "
      "many elements");
  expectError(call("conv2d", {f32({1, 1, half, 1}), f32({2, 1, 1, 1}),
                              ints({0, 1 << 30}, "padding")}),
              callLoc,
              "'conv2d' result shape [1, 2, 4611686018427387904, 2147483649] "
              "has too many elements");
  expectError(call("conv2d", {f32({1, 1, INT64_MAX, 1}), f32({1, 1, 1, 1}),
                              ints({1, 0}, "padding")}),
              callLoc,
              "'conv2d' result shape [1, 1, 9223372036854775809, 1] has too "
              "many elements");
  expectError(call("max_pool2d", {f32({1, 1, INT64_MAX, 1}), i(2),
                                  i(1, "stride"), i(1, "padding")}),
              callLoc,
              "'max_pool2d' result shape [1, 1, 9223372036854775808, 2] has "
              "too many elements");
  expectError(
      call("embedding", {tensor(DType::I32, {t40}), f32({10, 1 << 30})}),
      callLoc,
      "'embedding' result shape [1099511627776, 1073741824] has too many "
      "elements");
  expectError(call("attention", {f32({1, 1, t40, 1}), f32({1, 1, 1, 1}),
                                 f32({1, 1, 1, t40})}),
              callLoc,
              "'attention' result shape [1, 1, 1099511627776, 1099511627776] "
              "has too many elements");
  // Just fitting is fine.
  EXPECT_EQ(typeOf(call("concat", {list({f32({k60, 3}), f32({k60, 3})})})),
            tt(DType::F32, {2 * k60, 3}));
}

} // namespace
} // namespace modelc::test
