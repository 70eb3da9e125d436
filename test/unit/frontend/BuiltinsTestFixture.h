// A Function, GraphBuilder and DiagnosticEngine for testing the built-ins:
// arguments are made with a fresh source line each, so a test can check
// that an error points at the offending argument.
#pragma once

#include "frontend/Builtins.h"

#include <gtest/gtest.h>

#include <sstream>

namespace modelc::test {

class BuiltinsTest : public ::testing::Test {
protected:
  BuiltinsTest() : diag(sm, out) {
    std::string text;
    for (int i = 1; i <= 200; ++i)
      text += "let v" + std::to_string(i) + " = op(a, b)\n";
    file = sm.addBuffer("t.mdl", text);
    diag.setErrorLimit(0);
  }

  SourceLoc nextLoc() { return SourceLoc{file, ++line, 5}; }

  Arg tensor(DType dtype, std::vector<int64_t> shape,
             const std::string &keyword = "") {
    int id = fn.addValue(TensorType{dtype, std::move(shape)});
    fn.args.push_back(id);
    return Arg{CValue::ofTensor(id), nextLoc(), keyword};
  }
  Arg f32(std::vector<int64_t> shape, const std::string &keyword = "") {
    return tensor(DType::F32, std::move(shape), keyword);
  }
  Arg scalar(CValue value, const std::string &keyword = "") {
    return Arg{std::move(value), nextLoc(), keyword};
  }
  Arg i(int64_t v, const std::string &keyword = "") {
    return scalar(CValue::ofInt(v), keyword);
  }
  Arg f(double v, const std::string &keyword = "") {
    return scalar(CValue::ofFloat(v), keyword);
  }
  Arg b(bool v, const std::string &keyword = "") {
    return scalar(CValue::ofBool(v), keyword);
  }
  Arg s(const std::string &v, const std::string &keyword = "") {
    return scalar(CValue::ofString(v), keyword);
  }
  Arg ints(std::vector<int64_t> vs, const std::string &keyword = "") {
    std::vector<CValue> list;
    for (int64_t v : vs)
      list.push_back(CValue::ofInt(v));
    return scalar(CValue::ofList(std::move(list)), keyword);
  }
  Arg list(std::vector<Arg> elements, const std::string &keyword = "") {
    std::vector<CValue> values;
    for (Arg &e : elements)
      values.push_back(e.value);
    return scalar(CValue::ofList(std::move(values)), keyword);
  }

  std::optional<CValue> call(const std::string &name, std::vector<Arg> args,
                             BuiltinContext ctx = {}) {
    callLoc = nextLoc();
    return callBuiltin(name, args, callLoc, ctx, builder);
  }
  std::optional<CValue> binary(ast::BinaryExpr::Op op, const Arg &lhs,
                               const Arg &rhs) {
    callLoc = nextLoc();
    return applyBinary(op, lhs, rhs, callLoc, builder);
  }
  std::optional<CValue> unary(ast::UnaryExpr::Op op, const Arg &operand) {
    callLoc = nextLoc();
    return applyUnary(op, operand, callLoc, builder);
  }

  /// The tensor type of a successful result.
  TensorType typeOf(const std::optional<CValue> &result) {
    EXPECT_TRUE(result.has_value()) << out.str();
    if (!result || !result->isTensor()) {
      ADD_FAILURE() << "not a tensor";
      return {};
    }
    return fn.values[result->tensor];
  }
  const Op &lastOp() { return fn.ops.back(); }
  template <typename T> T attr(const Op &op, const std::string &name) {
    auto it = op.attrs.find(name);
    if (it == op.attrs.end()) {
      ADD_FAILURE() << "no attribute '" << name << "' on " << op.name;
      return T();
    }
    const T *value = std::get_if<T>(&it->second.value);
    if (!value) {
      ADD_FAILURE() << "attribute '" << name << "' has another type";
      return T();
    }
    return *value;
  }

  /// Checks that the call failed with `message` reported at `at`.
  void expectError(const std::optional<CValue> &result, const SourceLoc &at,
                   const std::string &message) {
    EXPECT_FALSE(result.has_value());
    std::string expected = sm.format(at) + ": error: " + message + "\n";
    EXPECT_NE(out.str().find(expected), std::string::npos)
        << "expected: " << expected << "got: " << out.str();
    out.str("");
  }

  SourceManager sm;
  std::ostringstream out;
  DiagnosticEngine diag;
  Function fn;
  GraphBuilder builder{fn, diag};
  int file = -1;
  uint32_t line = 0;
  SourceLoc callLoc;
};

inline TensorType tt(DType dtype, std::vector<int64_t> shape) {
  return TensorType{dtype, std::move(shape)};
}

} // namespace modelc::test
