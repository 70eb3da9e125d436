// Values during elaboration: compile-time scalars and lists, or tensors that
// live in the Function being built. Shared by sema and the built-in ops.
#pragma once

#include "frontend/Program.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc {

struct CValue {
  enum class Kind { None, Int, Float, Bool, String, List, Tensor };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<CValue> list;  // List: `[..]` literals, tuples of results
  int tensor = -1;           // Tensor: value id in the current Function

  static CValue ofInt(int64_t v) { CValue c; c.kind = Kind::Int; c.i = v; return c; }
  static CValue ofFloat(double v) { CValue c; c.kind = Kind::Float; c.f = v; return c; }
  static CValue ofBool(bool v) { CValue c; c.kind = Kind::Bool; c.b = v; return c; }
  static CValue ofString(std::string v) { CValue c; c.kind = Kind::String; c.s = std::move(v); return c; }
  static CValue ofTensor(int id) { CValue c; c.kind = Kind::Tensor; c.tensor = id; return c; }
  static CValue ofList(std::vector<CValue> l) { CValue c; c.kind = Kind::List; c.list = std::move(l); return c; }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isScalar() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
};

/// Appends ops to a Function and reports errors with the current call chain.
class GraphBuilder {
public:
  GraphBuilder(Function &fn, DiagnosticEngine &diag) : fn(fn), diag(diag) {}
  Function &function() { return fn; }
  DiagnosticEngine &diagnostics() { return diag; }
  const TensorType &typeOf(int value) const { return fn.values[value]; }
  const TensorType &typeOf(const CValue &v) const { return fn.values[v.tensor]; }

  /// Adds an op with the given operands and result types; returns its results.
  std::vector<int> emit(const std::string &name, std::vector<int> operands,
                        const std::vector<TensorType> &resultTypes,
                        AttrDict attrs, SourceLoc loc) {
    Op op;
    op.name = name;
    op.operands = std::move(operands);
    for (const TensorType &t : resultTypes)
      op.results.push_back(fn.addValue(t));
    op.attrs = std::move(attrs);
    op.loc = loc;
    fn.ops.push_back(std::move(op));
    return fn.ops.back().results;
  }
  int emit1(const std::string &name, std::vector<int> operands,
            const TensorType &resultType, AttrDict attrs, SourceLoc loc) {
    return emit(name, std::move(operands), {resultType}, std::move(attrs), loc)[0];
  }
  /// A splat constant of `type` (scalars: shape {}).
  int constant(double value, const TensorType &type, SourceLoc loc) {
    AttrDict attrs;
    if (isFloat(type.dtype))
      attrs["value"] = Attr(value);
    else
      attrs["value"] = Attr(static_cast<int64_t>(value));
    return emit1("constant", {}, type, std::move(attrs), loc);
  }

private:
  Function &fn;
  DiagnosticEngine &diag;
};

} // namespace modelc
