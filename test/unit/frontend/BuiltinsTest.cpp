// The built-ins' result types, emitted ops and attributes, and the folding
// of compile-time operators (errors are in BuiltinsErrorsTest.cpp).
#include "BuiltinsTestFixture.h"

#include <cmath>

namespace modelc::test {
namespace {

using BinOp = ast::BinaryExpr::Op;
using V = std::vector<int64_t>;

TEST_F(BuiltinsTest, KnowsItsNames) {
  for (const char *name : {"relu", "gelu", "conv2d", "f32", "bool", "split",
                           "accuracy", "arange", "where", "log_softmax",
                           "zeros", "full_like", "nll_loss", "rms_norm"})
    EXPECT_TRUE(isBuiltin(name)) << name;
  for (const char *name : {"normal", "idx", "linear", "int"})
    EXPECT_FALSE(isBuiltin(name)) << name;
}

TEST_F(BuiltinsTest, FoldsIntArithmeticAsShapesNeed) {
  auto fold = [&](BinOp op, int64_t a, int64_t c) {
    std::optional<CValue> r = binary(op, i(a), i(c));
    EXPECT_TRUE(r && r->kind == CValue::Kind::Int) << out.str();
    return r ? r->i : 0;
  };
  EXPECT_EQ(fold(BinOp::Div, 7, 2), 3);
  EXPECT_EQ(fold(BinOp::Div, -7, 2), -4); // floor, as Python's //
  EXPECT_EQ(fold(BinOp::Mod, -7, 2), 1);
  EXPECT_EQ(fold(BinOp::Mod, 7, -2), -1);
  EXPECT_EQ(fold(BinOp::Div, 768, 12), 64);
  // (h + 2p - k) / s + 1 for h = 28, p = 2, k = 5, s = 1.
  EXPECT_EQ(fold(BinOp::Add, fold(BinOp::Div, 28 + 4 - 5, 1), 1), 28);
  EXPECT_EQ(fold(BinOp::Mul, 6, 7), 42);
  EXPECT_EQ(fold(BinOp::Sub, 6, 7), -1);
  EXPECT_TRUE(fn.ops.empty());
}

TEST_F(BuiltinsTest, FoldsFloatsComparisonsBoolsAndStrings) {
  std::optional<CValue> r = binary(BinOp::Div, f(7.0), i(2));
  ASSERT_TRUE(r && r->kind == CValue::Kind::Float);
  EXPECT_DOUBLE_EQ(r->f, 3.5);
  r = binary(BinOp::Mod, f(-7.5), i(2));
  ASSERT_TRUE(r && r->kind == CValue::Kind::Float);
  EXPECT_DOUBLE_EQ(r->f, 0.5);
  r = binary(BinOp::Lt, i(3), f(4.5));
  ASSERT_TRUE(r && r->kind == CValue::Kind::Bool);
  EXPECT_TRUE(r->b);
  r = binary(BinOp::And, b(true), b(false));
  ASSERT_TRUE(r && r->kind == CValue::Kind::Bool);
  EXPECT_FALSE(r->b);
  r = binary(BinOp::Eq, s("tanh"), s("tanh"));
  ASSERT_TRUE(r && r->kind == CValue::Kind::Bool);
  EXPECT_TRUE(r->b);
  r = binary(BinOp::Add, s("a"), s("b"));
  ASSERT_TRUE(r && r->kind == CValue::Kind::String);
  EXPECT_EQ(r->s, "ab");
  r = unary(ast::UnaryExpr::Op::Neg, i(3));
  ASSERT_TRUE(r && r->kind == CValue::Kind::Int);
  EXPECT_EQ(r->i, -3);
  r = unary(ast::UnaryExpr::Op::Not, b(true));
  ASSERT_TRUE(r && r->kind == CValue::Kind::Bool);
  EXPECT_FALSE(r->b);
}

TEST_F(BuiltinsTest, FoldsMathAndCastsOfCompileTimeScalars) {
  std::optional<CValue> r = call("sqrt", {i(64)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Float);
  EXPECT_DOUBLE_EQ(r->f, 8.0);
  r = call("relu", {i(-3)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Int);
  EXPECT_EQ(r->i, 0);
  r = call("f32", {i(3)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Float);
  EXPECT_DOUBLE_EQ(r->f, 3.0);
  r = call("i32", {f(-2.7)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Int);
  EXPECT_EQ(r->i, -2);
  r = call("u8", {i(300)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Int);
  EXPECT_EQ(r->i, 44);
  r = call("bool", {f(0.5)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Bool);
  EXPECT_TRUE(r->b);
  r = call("pow", {i(2), i(10)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Int);
  EXPECT_EQ(r->i, 1024);
  r = call("pow", {i(-1), i(1000000000000000001)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Int);
  EXPECT_EQ(r->i, -1);
  r = call("pow", {i(2), i(62)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Int);
  EXPECT_EQ(r->i, int64_t(1) << 62);
  r = call("maximum", {i(2), f(2.5)});
  ASSERT_TRUE(r && r->kind == CValue::Kind::Float);
  EXPECT_DOUBLE_EQ(r->f, 2.5);
  EXPECT_TRUE(fn.ops.empty());
}

TEST_F(BuiltinsTest, BroadcastsElementwiseOperators) {
  EXPECT_EQ(typeOf(binary(BinOp::Add, f32({2, 3}), f32({3}))),
            tt(DType::F32, {2, 3}));
  EXPECT_EQ(lastOp().name, "add");
  EXPECT_EQ(typeOf(binary(BinOp::Mul, f32({4, 1, 5}), f32({3, 1}))),
            tt(DType::F32, {4, 3, 5}));
  EXPECT_EQ(typeOf(binary(BinOp::Mod, tensor(DType::I32, {4}),
                          tensor(DType::I32, {4}))),
            tt(DType::I32, {4}));
  EXPECT_EQ(lastOp().name, "rem");
  EXPECT_EQ(broadcastShapes({8, 1, 6, 1}, {7, 1, 5}), (V{8, 7, 6, 5}));
  EXPECT_FALSE(broadcastShapes({2, 3}, {4}));
}

TEST_F(BuiltinsTest, ScalarsTakeTheTensorsElementType) {
  Arg x = tensor(DType::BF16, {4});
  EXPECT_EQ(typeOf(binary(BinOp::Mul, f(2.0), x)), tt(DType::BF16, {4}));
  const Op &constant = fn.ops[0];
  EXPECT_EQ(constant.name, "constant");
  EXPECT_EQ(fn.values[constant.results[0]], tt(DType::BF16, {}));
  EXPECT_DOUBLE_EQ(attr<double>(constant, "value"), 2.0);
  EXPECT_EQ(lastOp().operands, (std::vector<int>{constant.results[0], 0}));

  Arg ids = tensor(DType::I64, {4});
  EXPECT_EQ(typeOf(binary(BinOp::Sub, i(1), ids)), tt(DType::I64, {4}));
  EXPECT_EQ(attr<int64_t>(fn.ops[2], "value"), 1);
  // An int literal with a float tensor is fine.
  EXPECT_EQ(typeOf(binary(BinOp::Sub, i(1), x)), tt(DType::BF16, {4}));
}

TEST_F(BuiltinsTest, ComparisonsAndLogicGiveBool) {
  std::optional<CValue> lt = binary(BinOp::Lt, f32({2, 3}), f(0.5));
  EXPECT_EQ(typeOf(lt), tt(DType::Bool, {2, 3}));
  EXPECT_EQ(lastOp().name, "compare");
  EXPECT_EQ(attr<std::string>(lastOp(), "predicate"), "lt");
  Arg mask = scalar(*lt);
  EXPECT_EQ(typeOf(binary(BinOp::And, mask, tensor(DType::Bool, {3}))),
            tt(DType::Bool, {2, 3}));
  EXPECT_EQ(lastOp().name, "and");
  EXPECT_EQ(typeOf(unary(ast::UnaryExpr::Op::Not, mask)),
            tt(DType::Bool, {2, 3}));
  EXPECT_EQ(lastOp().name, "not");
  EXPECT_EQ(typeOf(unary(ast::UnaryExpr::Op::Neg, f32({2}))),
            tt(DType::F32, {2}));
  EXPECT_EQ(lastOp().name, "neg");
}

TEST_F(BuiltinsTest, UnaryMathWhereAndPow) {
  EXPECT_EQ(typeOf(call("relu", {tensor(DType::I32, {3})})),
            tt(DType::I32, {3}));
  EXPECT_EQ(typeOf(call("gelu", {f32({2, 8}), s("tanh", "approximate")})),
            tt(DType::F32, {2, 8}));
  EXPECT_EQ(attr<std::string>(lastOp(), "approximate"), "tanh");
  call("gelu", {f32({2})});
  EXPECT_EQ(attr<std::string>(lastOp(), "approximate"), "none");
  EXPECT_EQ(
      typeOf(call("where", {tensor(DType::Bool, {2, 1}), f32({3}), f(0.0)})),
      tt(DType::F32, {2, 3}));
  EXPECT_EQ(lastOp().name, "where");
  EXPECT_EQ(typeOf(call("pow", {f32({3}), i(2)})), tt(DType::F32, {3}));
  EXPECT_EQ(lastOp().name, "pow");
  EXPECT_EQ(typeOf(call("minimum", {f32({3}), f32({2, 1})})),
            tt(DType::F32, {2, 3}));
}

TEST_F(BuiltinsTest, CastsEmitCastOnlyWhenTheTypeChanges) {
  Arg image = tensor(DType::U8, {128, 28, 28});
  EXPECT_EQ(typeOf(call("f32", {image})), tt(DType::F32, {128, 28, 28}));
  EXPECT_EQ(lastOp().name, "cast");
  Arg x = f32({2});
  std::optional<CValue> same = call("f32", {x});
  ASSERT_TRUE(same && same->isTensor());
  EXPECT_EQ(same->tensor, x.value.tensor);
  EXPECT_EQ(fn.ops.size(), 1u);
}

TEST_F(BuiltinsTest, ReductionsNormaliseAxes) {
  EXPECT_EQ(typeOf(call("sum", {f32({2, 3})})), tt(DType::F32, {}));
  EXPECT_EQ(attr<V>(lastOp(), "axes"), (V{0, 1}));
  EXPECT_FALSE(attr<bool>(lastOp(), "keepdim"));
  EXPECT_EQ(typeOf(call("mean", {f32({2, 3, 4}), ints({-1, 0}, "axis"),
                                 b(true, "keepdim")})),
            tt(DType::F32, {1, 3, 1}));
  EXPECT_EQ(attr<V>(lastOp(), "axes"), (V{0, 2}));
  EXPECT_TRUE(attr<bool>(lastOp(), "keepdim"));
  EXPECT_EQ(typeOf(call("max", {f32({2, 3}), i(-1)})), tt(DType::F32, {2}));
  EXPECT_EQ(attr<V>(lastOp(), "axes"), (V{1}));
  // As PyTorch, the sum of small integers is i64.
  EXPECT_EQ(typeOf(call("sum", {tensor(DType::U8, {4})})), tt(DType::I64, {}));
  EXPECT_EQ(fn.ops[fn.ops.size() - 2].name, "cast");
}

TEST_F(BuiltinsTest, ArgmaxAndSoftmax) {
  EXPECT_EQ(typeOf(call("argmax", {f32({128, 10}), i(-1, "axis")})),
            tt(DType::I64, {128}));
  EXPECT_EQ(attr<int64_t>(lastOp(), "axis"), 1);
  EXPECT_FALSE(attr<bool>(lastOp(), "keepdim"));
  EXPECT_EQ(typeOf(call("softmax", {f32({2, 5})})), tt(DType::F32, {2, 5}));
  EXPECT_EQ(attr<int64_t>(lastOp(), "axis"), 1);
  EXPECT_EQ(typeOf(call("log_softmax", {f32({2, 5}), i(0, "axis")})),
            tt(DType::F32, {2, 5}));
  EXPECT_EQ(attr<int64_t>(lastOp(), "axis"), 0);
}

TEST_F(BuiltinsTest, ReshapeFlattenTranspose) {
  EXPECT_EQ(typeOf(call("reshape", {f32({128, 28, 28}), ints({128, -1})})),
            tt(DType::F32, {128, 784}));
  EXPECT_EQ(lastOp().name, "reshape");
  EXPECT_EQ(typeOf(call("flatten", {f32({8, 16, 4, 4})})),
            tt(DType::F32, {8, 256}));
  EXPECT_EQ(typeOf(call("flatten", {f32({2, 3, 4}), i(0, "start")})),
            tt(DType::F32, {24}));
  EXPECT_EQ(typeOf(call("transpose", {f32({2, 3, 4})})),
            tt(DType::F32, {2, 4, 3}));
  EXPECT_EQ(attr<V>(lastOp(), "perm"), (V{0, 2, 1}));
  EXPECT_EQ(typeOf(call("transpose", {f32({2, 3, 4}), ints({-1, 0, 1})})),
            tt(DType::F32, {4, 2, 3}));
  EXPECT_EQ(attr<V>(lastOp(), "perm"), (V{2, 0, 1}));
}

TEST_F(BuiltinsTest, ConcatSplitBroadcastArange) {
  EXPECT_EQ(
      typeOf(call("concat", {list({f32({2, 3}), f32({2, 5})}), i(-1, "axis")})),
      tt(DType::F32, {2, 8}));
  EXPECT_EQ(attr<int64_t>(lastOp(), "axis"), 1);
  EXPECT_EQ(lastOp().operands.size(), 2u);

  std::optional<CValue> parts = call("split", {f32({4, 6}), i(3), i(-1)});
  ASSERT_TRUE(parts && parts->kind == CValue::Kind::List);
  ASSERT_EQ(parts->list.size(), 3u);
  for (const CValue &p : parts->list)
    EXPECT_EQ(fn.values[p.tensor], tt(DType::F32, {4, 2}));
  EXPECT_EQ(lastOp().name, "split");
  EXPECT_EQ(lastOp().results.size(), 3u);
  EXPECT_EQ(attr<int64_t>(lastOp(), "axis"), 1);

  EXPECT_EQ(typeOf(call("broadcast_to", {f32({3}), ints({2, 3})})),
            tt(DType::F32, {2, 3}));
  EXPECT_EQ(typeOf(call("arange", {i(16)})), tt(DType::I32, {16}));
  EXPECT_EQ(lastOp().name, "arange");
}

TEST_F(BuiltinsTest, IndexingSlicesAndDropsAxes) {
  Arg x = f32({2, 3, 4});
  using K = ast::IndexItem::Kind;
  auto slice = [&](std::optional<int64_t> lo, std::optional<int64_t> hi,
                   std::optional<int64_t> step = std::nullopt) {
    return IndexSpec{K::Slice, nextLoc(), std::nullopt, lo, hi, step};
  };
  auto single = [&](int64_t index) {
    return IndexSpec{K::Single, nextLoc(), index, {}, {}, {}};
  };
  IndexSpec all = slice(std::nullopt, std::nullopt);
  EXPECT_EQ(typeOf(applyIndex(x, {all, slice(0, 2)}, nextLoc(), builder)),
            tt(DType::F32, {2, 2, 4}));
  EXPECT_EQ(lastOp().name, "slice");
  EXPECT_EQ(attr<V>(lastOp(), "starts"), (V{0, 0, 0}));
  EXPECT_EQ(attr<V>(lastOp(), "limits"), (V{2, 2, 4}));
  EXPECT_EQ(attr<V>(lastOp(), "strides"), (V{1, 1, 1}));

  IndexSpec dots{K::Ellipsis, nextLoc(), {}, {}, {}, {}};
  EXPECT_EQ(typeOf(applyIndex(x, {dots, single(-1)}, nextLoc(), builder)),
            tt(DType::F32, {2, 3}));
  EXPECT_EQ(lastOp().name, "reshape");
  const Op &sliceOp = fn.ops[fn.ops.size() - 2];
  EXPECT_EQ(attr<V>(sliceOp, "starts"), (V{0, 0, 3}));
  EXPECT_EQ(attr<V>(sliceOp, "limits"), (V{2, 3, 4}));

  Arg y = f32({7});
  EXPECT_EQ(
      typeOf(applyIndex(y, {slice(1, std::nullopt, 2)}, nextLoc(), builder)),
      tt(DType::F32, {3}));
  EXPECT_EQ(attr<V>(lastOp(), "strides"), (V{2}));
  // Out-of-range slice bounds clamp as in Python: the whole axis, no op.
  size_t before = fn.ops.size();
  std::optional<CValue> whole =
      applyIndex(y, {slice(-100, 100)}, nextLoc(), builder);
  ASSERT_TRUE(whole && whole->isTensor());
  EXPECT_EQ(whole->tensor, y.value.tensor);
  EXPECT_EQ(fn.ops.size(), before);

  std::optional<CValue> element =
      applyIndex(ints({10, 20, 30}), {single(-1)}, nextLoc(), builder);
  ASSERT_TRUE(element && element->kind == CValue::Kind::Int);
  EXPECT_EQ(element->i, 30);
}

TEST_F(BuiltinsTest, MatmulFollowsTorch) {
  EXPECT_EQ(typeOf(binary(BinOp::MatMul, f32({128, 784}), f32({784, 256}))),
            tt(DType::F32, {128, 256}));
  EXPECT_EQ(lastOp().name, "matmul");
  EXPECT_EQ(typeOf(binary(BinOp::MatMul, f32({3}), f32({3, 4}))),
            tt(DType::F32, {4}));
  EXPECT_EQ(typeOf(binary(BinOp::MatMul, f32({2, 3}), f32({3}))),
            tt(DType::F32, {2}));
  EXPECT_EQ(typeOf(binary(BinOp::MatMul, f32({3}), f32({3}))),
            tt(DType::F32, {}));
  EXPECT_EQ(typeOf(binary(BinOp::MatMul, f32({2, 1, 3, 4}), f32({5, 4, 6}))),
            tt(DType::F32, {2, 5, 3, 6}));
  EXPECT_EQ(typeOf(call("matmul", {f32({4, 2, 3}), f32({3, 5})})),
            tt(DType::F32, {4, 2, 5}));
}

TEST_F(BuiltinsTest, Conv2dAndPooling) {
  EXPECT_EQ(typeOf(call("conv2d", {f32({8, 3, 32, 32}), f32({16, 3, 5, 5}),
                                   f32({16}), i(2, "padding")})),
            tt(DType::F32, {8, 16, 32, 32}));
  const Op &conv = lastOp();
  EXPECT_EQ(conv.operands.size(), 3u);
  EXPECT_EQ(attr<V>(conv, "stride"), (V{1, 1}));
  EXPECT_EQ(attr<V>(conv, "padding"), (V{2, 2}));
  EXPECT_EQ(attr<V>(conv, "dilation"), (V{1, 1}));
  EXPECT_EQ(attr<int64_t>(conv, "groups"), 1);
  EXPECT_EQ(typeOf(call("conv2d", {f32({1, 4, 28, 28}), f32({8, 2, 3, 3}),
                                   ints({2, 1}, "stride"), i(2, "dilation"),
                                   i(2, "groups")})),
            tt(DType::F32, {1, 8, 12, 24}));
  EXPECT_EQ(lastOp().operands.size(), 2u);
  EXPECT_EQ(attr<V>(lastOp(), "stride"), (V{2, 1}));
  EXPECT_EQ(attr<int64_t>(lastOp(), "groups"), 2);

  EXPECT_EQ(typeOf(call("max_pool2d", {f32({8, 16, 33, 32}), i(2)})),
            tt(DType::F32, {8, 16, 16, 16}));
  EXPECT_EQ(attr<V>(lastOp(), "kernel"), (V{2, 2}));
  EXPECT_EQ(attr<V>(lastOp(), "stride"), (V{2, 2}));
  EXPECT_EQ(attr<V>(lastOp(), "padding"), (V{0, 0}));
  EXPECT_EQ(typeOf(call("avg_pool2d",
                        {f32({1, 1, 7, 7}), i(3), i(1), i(1, "padding")})),
            tt(DType::F32, {1, 1, 7, 7}));
  EXPECT_EQ(lastOp().name, "avg_pool2d");
}

TEST_F(BuiltinsTest, NormalisationEmbeddingDropoutAttention) {
  EXPECT_EQ(typeOf(call("layer_norm", {f32({2, 5, 8}), f32({8}), f32({8})})),
            tt(DType::F32, {2, 5, 8}));
  EXPECT_DOUBLE_EQ(attr<double>(lastOp(), "eps"), 1e-5);
  EXPECT_EQ(
      typeOf(call("embedding", {tensor(DType::I32, {4, 16}), f32({100, 32})})),
      tt(DType::F32, {4, 16, 32}));
  EXPECT_EQ(typeOf(call("dropout", {f32({4}), f(0.1)})), tt(DType::F32, {4}));
  EXPECT_DOUBLE_EQ(attr<double>(lastOp(), "p"), 0.1);

  EXPECT_EQ(typeOf(call("attention", {f32({2, 4, 16, 64}), f32({2, 4, 8, 64}),
                                      f32({2, 4, 8, 32}), b(true, "causal")})),
            tt(DType::F32, {2, 4, 16, 32}));
  EXPECT_TRUE(attr<bool>(lastOp(), "causal"));
  EXPECT_DOUBLE_EQ(attr<double>(lastOp(), "scale"), 0.125);
  call("attention", {f32({1, 1, 2, 4}), f32({1, 1, 2, 4}), f32({1, 1, 2, 4}),
                     f(0.5, "scale")});
  EXPECT_FALSE(attr<bool>(lastOp(), "causal"));
  EXPECT_DOUBLE_EQ(attr<double>(lastOp(), "scale"), 0.5);
}

TEST_F(BuiltinsTest, LossesAndMetrics) {
  EXPECT_EQ(typeOf(call("cross_entropy",
                        {f32({128, 10}), tensor(DType::I32, {128})})),
            tt(DType::F32, {}));
  EXPECT_EQ(attr<int64_t>(lastOp(), "ignore_index"), -100);
  EXPECT_EQ(typeOf(call("cross_entropy",
                        {tensor(DType::BF16, {4, 64, 50}),
                         tensor(DType::I64, {4, 64}), i(0, "ignore_index")})),
            tt(DType::F32, {}));
  EXPECT_EQ(attr<int64_t>(lastOp(), "ignore_index"), 0);
  EXPECT_EQ(typeOf(call("mse_loss",
                        {tensor(DType::F64, {3}), tensor(DType::F64, {3})})),
            tt(DType::F64, {}));
  BuiltinContext metrics;
  metrics.inMetrics = true;
  EXPECT_EQ(typeOf(call("accuracy", {f32({128, 10}), tensor(DType::U8, {128})},
                        metrics)),
            tt(DType::F32, {}));
  EXPECT_EQ(lastOp().name, "accuracy");
}

} // namespace
} // namespace modelc::test
