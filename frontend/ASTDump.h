// Printing the AST: an indented tree for `modelc --emit=ast` and the parser
// tests, and source-like text of expressions and types for messages.
#pragma once

#include "frontend/AST.h"

#include <ostream>
#include <string>

namespace modelc {

/// One line per node, indented two spaces per level: the node kind, its
/// names, operator or literal value, and `line:col`. Declarations appear in
/// source order. For example:
///   Module mlp.mdl
///     Block mlp 4:1
///       Arg x : f32[b, n] 4:11
///       Result f32[b, classes] 4:58
///       Let h 5:3
///         Call 5:11
///           Name relu 5:11
void dumpAST(const ast::Module &module, const SourceManager &sm,
             std::ostream &os);

/// The expression as source text, with only the parentheses it needs:
/// `nn.linear(x, 10) as fc1`, `-(a + b) * c`, `x[:, 0:T]`.
std::string formatExpr(const ast::Expr &expr);
/// The type as source text: `f32[*lead, n]`, `u8[]`, `int`.
std::string formatType(const ast::TypeExpr &type);
/// A scope or parameter path as written: `transformer.h[i]`, `h.0.attn`.
std::string formatPath(const std::vector<ast::PathComponent> &path);
/// One index item as written: `i`, `0:T`, `::2`, `...`.
std::string formatIndexItem(const ast::IndexItem &item);
/// The operator as written: `+`, `@`, `&&`.
const char *binaryOpSpelling(ast::BinaryExpr::Op op);
/// A string literal with its escapes: "a\"b".
std::string quoteString(const std::string &value);

} // namespace modelc
