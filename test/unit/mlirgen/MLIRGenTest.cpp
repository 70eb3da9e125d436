// MLIRGen on hand-built Programs: what sema cannot produce from source, such
// as an attribute that the op does not declare.
#include "frontend/Program.h"
#include "frontend/mlirgen/MLIRGen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <string>

namespace modelc {
namespace {

/// One block `f(x: f32[4]) -> f32[4]` whose body is one `softmax` op with
/// `attrs`.
Program softmaxProgram(AttrDict attrs) {
  Function fn;
  fn.symbol = "f";
  fn.blockName = "f";
  int x = fn.addValue({DType::F32, {4}});
  int y = fn.addValue({DType::F32, {4}});
  fn.args = {x};
  fn.argNames = {"x"};
  fn.ops.push_back({"softmax", {x}, {y}, std::move(attrs), -1, {}});
  fn.results = {y};
  Program program;
  program.functions.push_back(std::move(fn));
  return program;
}

/// generateMLIR's result, and the diagnostics it reported.
std::pair<bool, std::string> generate(const Program &program) {
  mlir::MLIRContext context;
  std::string messages;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    messages += d.str() + "\n";
    return mlir::success();
  });
  SourceManager sm;
  bool ok = static_cast<bool>(generateMLIR(program, sm, context));
  return {ok, messages};
}

TEST(MLIRGen, DeclaredAttributesPass) {
  auto [ok, messages] = generate(softmaxProgram({{"axis", Attr(0)}}));
  EXPECT_TRUE(ok) << messages;
  EXPECT_EQ(messages, "");
}

TEST(MLIRGen, AnUndeclaredAttributeIsAnInternalError) {
  // A misspelled key must not become the op's default in silence.
  auto [ok, messages] = generate(softmaxProgram({{"axsi", Attr(0)}}));
  EXPECT_FALSE(ok);
  EXPECT_NE(messages.find("internal error: 'mdl.softmax' has no attribute "
                          "'axsi'"),
            std::string::npos)
      << messages;
}

} // namespace
} // namespace modelc
