// The checked, elaborated program that sema produces from the AST: concrete
// shapes everywhere, one Function per specialised block, consts folded,
// `for` unrolled, `if` decided, parameters named. MLIRGen turns it into the
// mdl dialect one-to-one; nothing here depends on MLIR.
#pragma once

#include "frontend/Diagnostics.h"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace modelc {

enum class DType { F32, F16, BF16, F64, I32, I64, U8, U16, Bool };

/// "f32", "bf16", ... as written in .mdl.
const char *dtypeName(DType t);
/// Parses a dtype name; false when `name` is not one.
bool parseDType(const std::string &name, DType &out);
bool isFloat(DType t);
bool isInteger(DType t);  // i32 i64 u8 u16 (not bool)

struct TensorType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // empty: scalar tensor
  int64_t numElements() const;
  /// "f32[128, 784]" (the .mdl spelling, used in messages and manifests).
  std::string str() const;
  bool operator==(const TensorType &o) const {
    return dtype == o.dtype && shape == o.shape;
  }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
};

/// A compile-time attribute value on an op or in settings.
struct Attr;
using AttrList = std::vector<Attr>;
using AttrDict = std::map<std::string, Attr>;
struct Attr {
  std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
               std::vector<double>, std::vector<std::string>, AttrDict>
      value;
  Attr() : value(int64_t(0)) {}
  Attr(int64_t v) : value(v) {}
  Attr(int v) : value(int64_t(v)) {}
  Attr(double v) : value(v) {}
  Attr(bool v) : value(v) {}
  Attr(std::string v) : value(std::move(v)) {}
  Attr(const char *v) : value(std::string(v)) {}
  Attr(std::vector<int64_t> v) : value(std::move(v)) {}
  Attr(std::vector<double> v) : value(std::move(v)) {}
  Attr(std::vector<std::string> v) : value(std::move(v)) {}
  Attr(AttrDict v) : value(std::move(v)) {}
};

/// One operation of the elaborated graph. `name` is the mdl op name without
/// the dialect prefix ("add", "matmul", "conv2d", "reduce" is not used: each
/// reduction has its own name, see docs/dialect.md), plus three structural
/// ops:
///   "constant"  — attrs: "value" (double or int64) splat over the result
///                  type, or "values" (vector<double>/vector<int64_t>) dense;
///   "param_ref" — attrs: "name" (full parameter name; only in entries);
///   "call"      — `callee` is the index of a Function in Program::functions;
///                  operands are the tensor arguments followed by one value per
///                  callee param slot, in slot order.
/// Attribute names and conventions are the dialect's (docs/dialect.md):
/// axes normalised non-negative, "predicate" for compare, etc.
struct Op {
  std::string name;
  std::vector<int> operands;  // value ids in the enclosing Function
  std::vector<int> results;   // value ids
  AttrDict attrs;
  int callee = -1;
  SourceLoc loc;
};

/// How a parameter starts: "zeros", "ones", "full", "normal", "uniform",
/// "kaiming_uniform", "xavier_uniform", "truncated_normal" with its arguments.
struct Initializer {
  std::string kind;
  std::vector<double> args;
};

/// A parameter that a function uses: created by it (or a block it calls), or
/// tied with `&path`. `path` is relative to the function's scope; the caller
/// prefixes its `as` scope. Slot values are the trailing function arguments.
struct ParamSlot {
  std::string path;
  TensorType type;
  bool tied = false;  // from `&path`: refers to a parameter created elsewhere
  int value = -1;     // value id in the function
  Initializer init;   // when !tied
  bool buffer = false; // a module buffer (`buffer`), when !tied
  SourceLoc loc;      // the `param` statement, or the `&path` expression
};

/// A straight-line graph: a specialised block, or an entry's body.
struct Function {
  std::string symbol;     // unique symbol: "mlp", "nn.linear", "nn.linear_1"
  std::string blockName;  // qualified block name for messages: "nn.linear"
  SourceLoc loc;          // the block declaration
  std::string key;        // the specialisation: "nn.linear(f32[128,784], out=256)"
  std::vector<TensorType> values;  // type of each value id
  std::vector<int> args;           // tensor arguments (value ids)
  std::vector<std::string> argNames;
  std::vector<ParamSlot> params;   // trailing arguments
  std::vector<Op> ops;
  std::vector<int> results;        // returned value ids
  int addValue(const TensorType &t) {
    values.push_back(t);
    return static_cast<int>(values.size()) - 1;
  }
};

/// A trainable parameter, or a module buffer (`buffer`: non-trainable
/// state saved with the parameters, as PyTorch's register_buffer).
struct Parameter {
  std::string name;  // full name: "transformer.h.0.attn.c_attn.weight"
  TensorType type;
  Initializer init;
  bool buffer = false;
  SourceLoc loc;     // the `param` statement
  SourceLoc callSite;  // the outermost call site in the entry that created it
};

/// Whether `name` is a data source (schema/DataSources.def).
inline bool isDataSourceName(const std::string &name) {
#define MODELC_DATA_SOURCE(KIND, NAME, ARGS)                                   \
  if (name == #NAME)                                                           \
    return true;
#include "schema/DataSources.def"
  return false;
}

/// Where a data field's samples come from (§7).
struct DataSource {
  std::string kind;  // a name of schema/DataSources.def other than windows
  std::string path;  // as written (resolved by the program at run time)
  std::string key;   // npz member
  bool windows = false;
  /// windows(..., stride = k): tokens between window starts; 0 for the
  /// default, the window length - 1 (consecutive windows share one token).
  int64_t stride = 0;
};

struct DataField {
  std::string name;
  TensorType type;  // per sample (no batch dimension)
  DataSource source;
  SourceLoc loc;
};

struct DataSet {
  std::string name;
  std::vector<DataField> fields;
  SourceLoc loc;
};

/// A train or infer entry. `body` takes the inputs as its tensor arguments
/// (train: the batch fields in data-field order with the batch dimension
/// prepended; infer: the declared inputs) and returns the outputs (train:
/// the loss, then each metric; infer: each output). Its params slots carry
/// full names (tied slots already resolved), and the body refers to them
/// with "param_ref" ops, so `body.params` is empty.
struct Entry {
  enum class Kind { Train, Infer };
  Kind kind = Kind::Train;
  std::string name;
  SourceLoc loc;
  Function body;
  std::vector<std::string> inputNames;
  std::vector<std::string> outputNames;
  std::string dataName;  // train: the data set
  /// Train settings, normalised with defaults filled in (docs/language.md):
  ///   batch, steps|epochs, accumulate, precision ("f32"|"bf16"|"f16"),
  ///   seed, shuffle, grad_clip (absent when off),
  ///   optimizer {kind, lr, momentum, weight_decay, nesterov, betas, eps},
  ///   schedule {kind, warmup, min_lr, every, gamma},
  ///   eval {data, every (int; 0 means every epoch), steps (0 = all)},
  ///   checkpoint {every, dir, keep}, log {every}, parallel {data}.
  AttrDict settings;
  std::vector<std::string> usedParams;  // full names, first use order
};

struct Program {
  std::string mainFile;    // path of the compiled file
  std::string sourceHash;  // hash of every loaded source (hex)
  std::vector<Function> functions;  // specialised blocks
  std::vector<Parameter> params;    // union over entries, creation order
  std::vector<DataSet> dataSets;    // those that entries use, and all declared
  std::vector<Entry> entries;       // in source order
  int64_t totalParameterCount() const;
};

} // namespace modelc
