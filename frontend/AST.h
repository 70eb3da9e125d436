// The abstract syntax tree of a .mdl file, as the parser builds it. No MLIR
// here: sema checks it and builds a Program (Program.h); MLIRGen reads that.
#pragma once

#include "frontend/Diagnostics.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace modelc::ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

struct Expr {
  enum class Kind {
    Int,
    Float,
    String,
    Bool,
    Name,
    Unary,
    Binary,
    Call,
    Member,
    Index,
    List,
    As,
    ParamRef,
    Range,
    Interpolated
  };
  Expr(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  const Kind kind;
  SourceLoc loc; // the first token of the expression (operator for Binary)
  /// Nodes on the longest path from here down to a leaf (1 for a leaf); set
  /// by the parser, which keeps it under Parser::kMaxNesting so that every
  /// recursive walk of the tree stays far within the stack.
  unsigned height = 1;

  template <typename T> const T *as() const {
    return kind == T::kKind ? static_cast<const T *>(this) : nullptr;
  }
  template <typename T> T *as() {
    return kind == T::kKind ? static_cast<T *>(this) : nullptr;
  }
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntExpr : Expr {
  static constexpr Kind kKind = Kind::Int;
  IntExpr(SourceLoc loc, int64_t value) : Expr(kKind, loc), value(value) {}
  int64_t value;
};
struct FloatExpr : Expr {
  static constexpr Kind kKind = Kind::Float;
  FloatExpr(SourceLoc loc, double value) : Expr(kKind, loc), value(value) {}
  double value;
};
struct StringExpr : Expr {
  static constexpr Kind kKind = Kind::String;
  StringExpr(SourceLoc loc, std::string value)
      : Expr(kKind, loc), value(std::move(value)) {}
  std::string value; // escapes already decoded
};
struct BoolExpr : Expr {
  static constexpr Kind kKind = Kind::Bool;
  BoolExpr(SourceLoc loc, bool value) : Expr(kKind, loc), value(value) {}
  bool value;
};
/// A bare identifier: a local, argument, const, block, built-in, dtype name
/// (`f32(x)`), or an import alias (`nn` in `nn.linear`).
struct NameExpr : Expr {
  static constexpr Kind kKind = Kind::Name;
  NameExpr(SourceLoc loc, std::string name)
      : Expr(kKind, loc), name(std::move(name)) {}
  std::string name;
};
struct UnaryExpr : Expr {
  static constexpr Kind kKind = Kind::Unary;
  enum class Op { Neg, Not };
  UnaryExpr(SourceLoc loc, Op op, ExprPtr operand)
      : Expr(kKind, loc), op(op), operand(std::move(operand)) {}
  Op op;
  ExprPtr operand;
};
struct BinaryExpr : Expr {
  static constexpr Kind kKind = Kind::Binary;
  enum class Op {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    MatMul
  };
  BinaryExpr(SourceLoc loc, Op op, ExprPtr lhs, ExprPtr rhs)
      : Expr(kKind, loc), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  Op op;
  ExprPtr lhs, rhs;
};
struct KeywordArg {
  SourceLoc loc;
  std::string name;
  ExprPtr value;
};
/// `callee(args, key = value)`; callee is a NameExpr or a MemberExpr
/// (`nn.linear`).
struct CallExpr : Expr {
  static constexpr Kind kKind = Kind::Call;
  CallExpr(SourceLoc loc, ExprPtr callee)
      : Expr(kKind, loc), callee(std::move(callee)) {}
  ExprPtr callee;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;
};
/// `base.field`: a qualified name (`nn.linear`) or a batch field
/// (`batch.image`).
struct MemberExpr : Expr {
  static constexpr Kind kKind = Kind::Member;
  MemberExpr(SourceLoc loc, ExprPtr base, std::string field)
      : Expr(kKind, loc), base(std::move(base)), field(std::move(field)) {}
  ExprPtr base;
  std::string field;
  SourceLoc fieldLoc;
};
/// One item of an index list: `e`, `lo:hi`, `lo:hi:step` (each part
/// optional), or `...`.
struct IndexItem {
  enum class Kind { Single, Slice, Ellipsis };
  Kind kind = Kind::Single;
  SourceLoc loc;
  ExprPtr index;        // Single
  ExprPtr lo, hi, step; // Slice; null when omitted
};
struct IndexExpr : Expr {
  static constexpr Kind kKind = Kind::Index;
  IndexExpr(SourceLoc loc, ExprPtr base)
      : Expr(kKind, loc), base(std::move(base)) {}
  ExprPtr base;
  std::vector<IndexItem> items;
};
/// `[a, b, c]`: shapes for reshape, permutations, betas, concat operands.
struct ListExpr : Expr {
  static constexpr Kind kKind = Kind::List;
  ListExpr(SourceLoc loc) : Expr(kKind, loc) {}
  std::vector<ExprPtr> elements;
};
/// One component of a scope or parameter path: `h` or `h[i]` (the index is
/// a compile-time int expression; `h[i]` names the scope `h.<i>`).
struct PathComponent {
  SourceLoc loc;
  std::string name;
  ExprPtr index; // optional
};
/// `call as name`, `call as blocks[i]`, `call as transformer.h[i]`: the
/// scope that the parameters created by the call are named under.
struct AsExpr : Expr {
  static constexpr Kind kKind = Kind::As;
  AsExpr(SourceLoc loc, ExprPtr call)
      : Expr(kKind, loc), call(std::move(call)) {}
  ExprPtr call;
  std::vector<PathComponent> scope;
};
/// `&path.to.param` (a component may be an integer, as in `&h.0.attn.w`,
/// stored as its decimal text, or an indexed name `h[i]`).
struct ParamRefExpr : Expr {
  static constexpr Kind kKind = Kind::ParamRef;
  ParamRefExpr(SourceLoc loc) : Expr(kKind, loc) {}
  std::vector<PathComponent> path;
};
/// A name built from compile-time ints, `weight_ih_l{i}` (each `{` right
/// after the text before it): texts[0] parts[0] texts[1] ... texts[n], each
/// part an int >= 0 written in decimal.
struct InterpolatedNameExpr : Expr {
  static constexpr Kind kKind = Kind::Interpolated;
  InterpolatedNameExpr(SourceLoc loc) : Expr(kKind, loc) {}
  std::vector<std::string> texts;
  std::vector<ExprPtr> parts;
};
/// `lo .. hi` (only in `for`).
struct RangeExpr : Expr {
  static constexpr Kind kKind = Kind::Range;
  RangeExpr(SourceLoc loc, ExprPtr lo, ExprPtr hi)
      : Expr(kKind, loc), lo(std::move(lo)), hi(std::move(hi)) {}
  ExprPtr lo, hi;
};

/// Where an expression starts in the source: its loc, except that a binary
/// expression's loc is its operator, so descend into its left operand.
/// Diagnostics about an argument or operand as a whole point here.
inline SourceLoc startLoc(const Expr &e) {
  const Expr *cur = &e;
  while (const auto *binary = cur->as<BinaryExpr>())
    cur = binary->lhs.get();
  return cur->loc;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// One dimension in a type: an expression (`128`, `T + 1`, `n` — a bare new
/// name in a block signature is a size variable) or `*lead`.
struct DimExpr {
  SourceLoc loc;
  bool variadic = false; // `*name`
  std::string variadicName;
  ExprPtr size; // when !variadic
};

/// `f32[b, n]`, `u8[]`, or a scalar kind `int` / `float` / `bool` / `string`.
struct TypeExpr {
  SourceLoc loc;
  std::string name;      // "f32", ..., or "int", "float", "bool", "string"
  bool isTensor = false; // has brackets
  std::vector<DimExpr> dims;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

struct Stmt {
  enum class Kind {
    Let,
    Assign,
    Return,
    For,
    If,
    Assert,
    Param,
    Group,
    Input,
    Output,
    Expr
  };
  Stmt(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  const Kind kind;
  SourceLoc loc;

  template <typename T> const T *as() const {
    return kind == T::kKind ? static_cast<const T *>(this) : nullptr;
  }
};
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

/// `let x = e` or `let (a, b) = e`.
struct LetStmt : Stmt {
  static constexpr Kind kKind = Kind::Let;
  LetStmt(SourceLoc loc) : Stmt(kKind, loc) {}
  std::vector<std::string> names;
  std::vector<SourceLoc> nameLocs;
  bool destructure = false; // parenthesised form
  ExprPtr value;
};
/// `name = e`: rebinding in a block; a setting in train/infer/data/groups.
struct AssignStmt : Stmt {
  static constexpr Kind kKind = Kind::Assign;
  AssignStmt(SourceLoc loc, std::string name, ExprPtr value)
      : Stmt(kKind, loc), name(std::move(name)), value(std::move(value)) {}
  std::string name;
  ExprPtr value;
};
struct ReturnStmt : Stmt {
  static constexpr Kind kKind = Kind::Return;
  ReturnStmt(SourceLoc loc) : Stmt(kKind, loc) {}
  std::vector<ExprPtr> values;
};
struct ForStmt : Stmt {
  static constexpr Kind kKind = Kind::For;
  ForStmt(SourceLoc loc) : Stmt(kKind, loc) {}
  std::string var;
  SourceLoc varLoc;
  ExprPtr lo, hi;
  StmtList body;
};
/// `if c { } else { }`; `else if` is an IfStmt alone in elseBody.
struct IfStmt : Stmt {
  static constexpr Kind kKind = Kind::If;
  IfStmt(SourceLoc loc) : Stmt(kKind, loc) {}
  ExprPtr cond;
  StmtList thenBody, elseBody;
};
struct AssertStmt : Stmt {
  static constexpr Kind kKind = Kind::Assert;
  AssertStmt(SourceLoc loc) : Stmt(kKind, loc) {}
  ExprPtr cond;
  ExprPtr message; // optional string expression
};
/// `param name: f32[...] = init(...)`, or with `buffer` in place of `param`
/// a module buffer (non-trainable state, spec §6).
struct ParamStmt : Stmt {
  static constexpr Kind kKind = Kind::Param;
  ParamStmt(SourceLoc loc) : Stmt(kKind, loc) {}
  bool buffer = false;
  std::string name;     // as written ("weight_ih_l{i}" when interpolated)
  ExprPtr interpolated; // an InterpolatedNameExpr, or null
  SourceLoc nameLoc;
  TypeExpr type;
  ExprPtr init; // a CallExpr of an initialiser
};
/// `name { stmts }`: a settings group (`metrics`, `eval`, `checkpoint`,
/// `log`, `parallel`).
struct GroupStmt : Stmt {
  static constexpr Kind kKind = Kind::Group;
  GroupStmt(SourceLoc loc, std::string name)
      : Stmt(kKind, loc), name(std::move(name)) {}
  std::string name;
  StmtList body;
};
/// `input name: TYPE` (infer).
struct InputStmt : Stmt {
  static constexpr Kind kKind = Kind::Input;
  InputStmt(SourceLoc loc) : Stmt(kKind, loc) {}
  std::string name;
  TypeExpr type;
};
/// `output name = expr` (infer).
struct OutputStmt : Stmt {
  static constexpr Kind kKind = Kind::Output;
  OutputStmt(SourceLoc loc) : Stmt(kKind, loc) {}
  std::string name;
  ExprPtr value;
};
/// A bare expression statement (a call whose result is unused).
struct ExprStmt : Stmt {
  static constexpr Kind kKind = Kind::Expr;
  ExprStmt(SourceLoc loc, ExprPtr value)
      : Stmt(kKind, loc), value(std::move(value)) {}
  ExprPtr value;
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

struct BlockArg {
  SourceLoc loc;
  std::string name;
  TypeExpr type;
  ExprPtr defaultValue; // optional (scalars)
};

struct ImportDecl {
  SourceLoc loc;
  std::string path;  // as written: "nn" or "path/x.mdl"
  std::string alias; // name used to qualify: "nn", "x"
};
struct ConstDecl {
  SourceLoc loc;
  std::string name;
  ExprPtr value;
};
struct BlockDecl {
  SourceLoc loc;
  std::string name;
  std::vector<BlockArg> args;
  std::vector<TypeExpr> results; // `-> T` or `-> (T1, T2)`; may be empty
  StmtList body;
};
/// A `data` field: `name: TYPE = source(...)`.
struct DataField {
  SourceLoc loc;
  std::string name;
  TypeExpr type;
  ExprPtr source;
};
struct DataDecl {
  SourceLoc loc;
  std::string name;
  std::vector<DataField> fields;
  StmtList settings; // `key = value` statements other than fields
};
/// `train NAME { ... }` / `infer NAME { ... }`.
struct EntryDecl {
  enum class Kind { Train, Infer };
  Kind kind;
  SourceLoc loc;
  std::string name;
  StmtList body;
};

/// One parsed file.
struct Module {
  int file = -1; // SourceManager id
  std::vector<ImportDecl> imports;
  std::vector<ConstDecl> consts;
  std::vector<BlockDecl> blocks;
  std::vector<DataDecl> data;
  std::vector<EntryDecl> entries;
};

} // namespace modelc::ast
