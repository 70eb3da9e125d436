// The AST as an indented tree, for --emit=ast and the parser tests.
#include "frontend/ASTDump.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace modelc {

using namespace ast;

namespace {

class Dumper {
public:
  explicit Dumper(std::ostream &os) : os(os) {}

  void module(const Module &module, const SourceManager &sm);

private:
  /// Prints one node line at the current depth; children go one deeper
  /// while the returned guard lives.
  struct Nest {
    Dumper &dumper;
    ~Nest() { --dumper.depth; }
  };
  Nest line(const std::string &text, SourceLoc loc = {}) {
    os << std::string(2 * depth, ' ') << text;
    if (loc.isValid())
      os << ' ' << loc.line << ':' << loc.col;
    os << '\n';
    ++depth;
    return Nest{*this};
  }

  void expr(const Expr &expr);
  void stmt(const Stmt &stmt);
  void stmts(const StmtList &list) {
    for (const StmtPtr &s : list)
      stmt(*s);
  }
  void block(const BlockDecl &block);
  void data(const DataDecl &data);
  void entry(const EntryDecl &entry);

  std::ostream &os;
  int depth = 0;
};

void Dumper::module(const Module &module, const SourceManager &sm) {
  std::string path = module.file >= 0 && module.file < sm.numFiles()
                         ? sm.file(module.file).path
                         : "<unknown>";
  Nest top = line("Module " + path);
  // Declarations live in one vector per kind; print them in source order.
  std::vector<std::pair<SourceLoc, std::function<void()>>> decls;
  for (const ImportDecl &d : module.imports)
    decls.push_back({d.loc, [this, &d] {
                       line("Import " + quoteString(d.path) + " as " + d.alias,
                            d.loc);
                     }});
  for (const ConstDecl &d : module.consts)
    decls.push_back({d.loc, [this, &d] {
                       Nest n = line("Const " + d.name, d.loc);
                       expr(*d.value);
                     }});
  for (const BlockDecl &d : module.blocks)
    decls.push_back({d.loc, [this, &d] { block(d); }});
  for (const DataDecl &d : module.data)
    decls.push_back({d.loc, [this, &d] { data(d); }});
  for (const EntryDecl &d : module.entries)
    decls.push_back({d.loc, [this, &d] { entry(d); }});
  std::stable_sort(
      decls.begin(), decls.end(), [](const auto &a, const auto &b) {
        return a.first.line != b.first.line ? a.first.line < b.first.line
                                            : a.first.col < b.first.col;
      });
  for (const auto &decl : decls)
    decl.second();
}

void Dumper::block(const BlockDecl &block) {
  Nest n = line("Block " + block.name, block.loc);
  for (const BlockArg &arg : block.args) {
    Nest a = line("Arg " + arg.name + " : " + formatType(arg.type), arg.loc);
    if (arg.defaultValue)
      expr(*arg.defaultValue);
  }
  for (const TypeExpr &result : block.results)
    line("Result " + formatType(result), result.loc);
  stmts(block.body);
}

void Dumper::data(const DataDecl &data) {
  Nest n = line("Data " + data.name, data.loc);
  for (const DataField &field : data.fields) {
    Nest f =
        line("Field " + field.name + " : " + formatType(field.type), field.loc);
    expr(*field.source);
  }
  stmts(data.settings);
}

void Dumper::entry(const EntryDecl &entry) {
  const char *kind = entry.kind == EntryDecl::Kind::Train ? "Train" : "Infer";
  Nest n = line(std::string(kind) + " " + entry.name, entry.loc);
  stmts(entry.body);
}

void Dumper::stmt(const Stmt &s) {
  switch (s.kind) {
  case Stmt::Kind::Let: {
    const auto *let = s.as<LetStmt>();
    std::string names;
    for (const std::string &name : let->names)
      names += (names.empty() ? "" : ", ") + name;
    Nest n =
        line("Let " + (let->destructure ? "(" + names + ")" : names), s.loc);
    expr(*let->value);
    return;
  }
  case Stmt::Kind::Assign: {
    const auto *assign = s.as<AssignStmt>();
    Nest n = line("Assign " + assign->name, s.loc);
    expr(*assign->value);
    return;
  }
  case Stmt::Kind::Return: {
    Nest n = line("Return", s.loc);
    for (const ExprPtr &value : s.as<ReturnStmt>()->values)
      expr(*value);
    return;
  }
  case Stmt::Kind::For: {
    const auto *loop = s.as<ForStmt>();
    Nest n = line("For " + loop->var, s.loc);
    {
      Nest r = line("Range");
      expr(*loop->lo);
      expr(*loop->hi);
    }
    Nest b = line("Body");
    stmts(loop->body);
    return;
  }
  case Stmt::Kind::If: {
    const auto *cond = s.as<IfStmt>();
    Nest n = line("If", s.loc);
    expr(*cond->cond);
    {
      Nest t = line("Then");
      stmts(cond->thenBody);
    }
    if (!cond->elseBody.empty()) {
      Nest e = line("Else");
      stmts(cond->elseBody);
    }
    return;
  }
  case Stmt::Kind::Assert: {
    const auto *check = s.as<AssertStmt>();
    Nest n = line("Assert", s.loc);
    expr(*check->cond);
    if (check->message)
      expr(*check->message);
    return;
  }
  case Stmt::Kind::Param: {
    const auto *param = s.as<ParamStmt>();
    Nest n =
        line(std::string(param->buffer ? "Buffer " : "Param ") + param->name +
                 " : " + formatType(param->type),
             s.loc);
    expr(*param->init);
    return;
  }
  case Stmt::Kind::Group: {
    const auto *group = s.as<GroupStmt>();
    Nest n = line("Group " + group->name, s.loc);
    stmts(group->body);
    return;
  }
  case Stmt::Kind::Input: {
    const auto *input = s.as<InputStmt>();
    line("Input " + input->name + " : " + formatType(input->type), s.loc);
    return;
  }
  case Stmt::Kind::Output: {
    const auto *output = s.as<OutputStmt>();
    Nest n = line("Output " + output->name, s.loc);
    expr(*output->value);
    return;
  }
  case Stmt::Kind::Expr: {
    Nest n = line("ExprStmt", s.loc);
    expr(*s.as<ExprStmt>()->value);
    return;
  }
  }
}

void Dumper::expr(const Expr &e) {
  switch (e.kind) {
  case Expr::Kind::Int:
  case Expr::Kind::Float:
  case Expr::Kind::String:
  case Expr::Kind::Bool: {
    static const char *const kNames[] = {"Int", "Float", "String", "Bool"};
    line(std::string(kNames[static_cast<int>(e.kind)]) + " " + formatExpr(e),
         e.loc);
    return;
  }
  case Expr::Kind::Name:
    line("Name " + e.as<NameExpr>()->name, e.loc);
    return;
  case Expr::Kind::Unary: {
    const auto *unary = e.as<UnaryExpr>();
    Nest n =
        line(unary->op == UnaryExpr::Op::Neg ? "Unary -" : "Unary !", e.loc);
    expr(*unary->operand);
    return;
  }
  case Expr::Kind::Binary: {
    const auto *binary = e.as<BinaryExpr>();
    Nest n = line(std::string("Binary ") + binaryOpSpelling(binary->op), e.loc);
    expr(*binary->lhs);
    expr(*binary->rhs);
    return;
  }
  case Expr::Kind::Call: {
    const auto *call = e.as<CallExpr>();
    Nest n = line("Call", e.loc);
    expr(*call->callee);
    for (const ExprPtr &arg : call->args)
      expr(*arg);
    for (const KeywordArg &kwarg : call->kwargs) {
      Nest k = line("Kwarg " + kwarg.name, kwarg.loc);
      expr(*kwarg.value);
    }
    return;
  }
  case Expr::Kind::Member: {
    const auto *member = e.as<MemberExpr>();
    Nest n = line("Member " + member->field, e.loc);
    expr(*member->base);
    return;
  }
  case Expr::Kind::Index: {
    const auto *index = e.as<IndexExpr>();
    Nest n = line("Index", e.loc);
    expr(*index->base);
    for (const IndexItem &item : index->items) {
      if (item.kind == IndexItem::Kind::Ellipsis) {
        line("Ellipsis", item.loc);
      } else if (item.kind == IndexItem::Kind::Single) {
        Nest i = line("Item", item.loc);
        expr(*item.index);
      } else {
        Nest i = line("Slice " + formatIndexItem(item), item.loc);
        for (const auto *part : {&item.lo, &item.hi, &item.step})
          if (*part)
            expr(**part);
      }
    }
    return;
  }
  case Expr::Kind::List: {
    Nest n = line("List", e.loc);
    for (const ExprPtr &element : e.as<ListExpr>()->elements)
      expr(*element);
    return;
  }
  case Expr::Kind::As: {
    const auto *scoped = e.as<AsExpr>();
    Nest n = line("As " + formatPath(scoped->scope), e.loc);
    expr(*scoped->call);
    return;
  }
  case Expr::Kind::ParamRef:
    line("ParamRef " + formatPath(e.as<ParamRefExpr>()->path), e.loc);
    return;
  case Expr::Kind::Interpolated: {
    const auto *name = e.as<InterpolatedNameExpr>();
    Nest n = line("Interpolated " + formatExpr(e), e.loc);
    for (const ExprPtr &part : name->parts)
      expr(*part);
    return;
  }
  case Expr::Kind::Range: {
    const auto *range = e.as<RangeExpr>();
    Nest n = line("Range", e.loc);
    expr(*range->lo);
    expr(*range->hi);
    return;
  }
  }
}

} // namespace

void dumpAST(const Module &module, const SourceManager &sm, std::ostream &os) {
  Dumper(os).module(module, sm);
}

} // namespace modelc
