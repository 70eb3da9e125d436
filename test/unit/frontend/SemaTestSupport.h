// Shared by the sema tests: a fixture that builds a Program from in-memory
// files (the main file "main.mdl", a small stdlib "std/nn.mdl", and any other
// file a test adds), and lookups into the result.
#pragma once

#include "frontend/Frontend.h"

#include <gtest/gtest.h>

#include <sstream>

namespace modelc::test {

/// A stdlib small enough to read next to the tests.
constexpr const char *kTestNN = R"(const EPS = 1e-5
block linear(x: f32[*lead, n], out: int, bias: bool = true) -> f32[*lead, out] {
  param weight: f32[out, n] = kaiming_uniform(n)
  let y = x @ transpose(weight)
  if bias {
    param bias: f32[out] = zeros()
    y = y + bias
  }
  return y
}
block embedding(ids: i32[*lead], num: int, dim: int) -> f32[*lead, dim] {
  param weight: f32[num, dim] = normal(0.0, 0.02)
  return embedding(ids, weight)
}
)";

class SemaTest : public ::testing::Test {
protected:
  SemaTest() : diag(sm, out) { diag.setErrorLimit(0); }

  void addFile(const std::string &path, const std::string &text) {
    sm.addBuffer(path, text);
  }

  /// Builds "main.mdl" with `text`; true when there were no errors.
  bool build(const std::string &text,
             std::vector<std::pair<std::string, std::string>> defines = {}) {
    addFile("std/nn.mdl", kTestNN);
    addFile("main.mdl", text);
    FrontendOptions options;
    options.stdlibDir = "std";
    options.defines = std::move(defines);
    return buildProgram("main.mdl", options, sm, diag, program);
  }

  std::string errors() const { return out.str(); }

  /// True when the diagnostics contain `text`; prints them otherwise.
  ::testing::AssertionResult reported(const std::string &text) const {
    if (out.str().find(text) != std::string::npos)
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "expected to find\n  " << text << "\nin\n"
           << out.str();
  }

  unsigned errorCount() const { return diag.errorCount(); }

  const Function *function(const std::string &symbol) const {
    for (const Function &f : program.functions)
      if (f.symbol == symbol)
        return &f;
    return nullptr;
  }
  const Entry *entry(const std::string &name) const {
    for (const Entry &e : program.entries)
      if (e.name == name)
        return &e;
    return nullptr;
  }
  const Parameter *param(const std::string &name) const {
    for (const Parameter &p : program.params)
      if (p.name == name)
        return &p;
    return nullptr;
  }
  std::vector<std::string> paramNames() const {
    std::vector<std::string> names;
    for (const Parameter &p : program.params)
      names.push_back(p.name);
    return names;
  }
  static std::vector<std::string> slotPaths(const Function &f) {
    std::vector<std::string> paths;
    for (const ParamSlot &s : f.params)
      paths.push_back(s.path + (s.tied ? " (tied)" : ""));
    return paths;
  }
  static std::vector<const Op *> ops(const Function &f,
                                     const std::string &name) {
    std::vector<const Op *> found;
    for (const Op &op : f.ops)
      if (op.name == name)
        found.push_back(&op);
    return found;
  }
  static const AttrDict &dict(const AttrDict &d, const std::string &key) {
    return std::get<AttrDict>(d.at(key).value);
  }
  template <typename T>
  static T get(const AttrDict &d, const std::string &key) {
    return std::get<T>(d.at(key).value);
  }

  SourceManager sm;
  std::ostringstream out;
  DiagnosticEngine diag;
  Program program;
};

} // namespace modelc::test
