// Entries (spec §8): each train or infer declaration of the main file
// becomes an Entry whose body is a Function over its inputs (the batch
// fields, or the declared inputs) returning its outputs. Infer entries are
// elaborated here; train entries and their settings in SemaTrain.cpp.
#include "frontend/Sema.h"

#include <algorithm>

namespace modelc::sema {

namespace {
const char *stmtWords(ast::Stmt::Kind kind) {
  switch (kind) {
  case ast::Stmt::Kind::Let:
    return "'let' bindings are";
  case ast::Stmt::Kind::Assign:
    return "settings are";
  case ast::Stmt::Kind::Return:
    return "'return' is";
  case ast::Stmt::Kind::For:
    return "'for' loops are";
  case ast::Stmt::Kind::If:
    return "'if' statements are";
  case ast::Stmt::Kind::Assert:
    return "'assert' statements are";
  case ast::Stmt::Kind::Param:
    return "'param' statements are";
  case ast::Stmt::Kind::Group:
    return "settings groups are";
  case ast::Stmt::Kind::Input:
    return "'input' declarations are";
  case ast::Stmt::Kind::Output:
    return "'output' declarations are";
  case ast::Stmt::Kind::Expr:
    return "expression statements are";
  }
  return "statements are";
}
} // namespace

void Sema::rejectEntryStmt(const ast::Stmt &s, const std::string &label,
                           const char *allowed) {
  std::string hint;
  if (s.kind == ast::Stmt::Kind::For || s.kind == ast::Stmt::Kind::If ||
      s.kind == ast::Stmt::Kind::Param)
    hint = "; put it in a block and call the block";
  const auto *param = s.as<ast::ParamStmt>();
  std::string words = param && param->buffer ? "'buffer' statements are"
                                             : stmtWords(s.kind);
  diag.error(s.loc, words + " not allowed in " +
                        label + ", which holds " + allowed + hint);
}

void Sema::elaborateEntry(const ast::EntryDecl &decl) {
  bool isTrain = decl.kind == ast::EntryDecl::Kind::Train;
  Entry entry;
  entry.kind = isTrain ? Entry::Kind::Train : Entry::Kind::Infer;
  entry.name = decl.name;
  entry.loc = decl.loc;
  EntryState es;
  es.decl = &decl;
  es.isTrain = isTrain;
  es.label = (isTrain ? "train '" : "infer '") + decl.name + "'";
  FunctionState st(0, diag); // entries belong to the main file
  st.entry = &es;
  st.scopes.emplace_back();
  st.fn.symbol = decl.name;
  st.fn.blockName = decl.name;
  st.fn.loc = decl.loc;
  frames.push_back(&st);
  if (isTrain)
    elaborateTrain(st, entry);
  else
    elaborateInfer(st, entry);
  frames.pop_back();
  entry.usedParams = es.usedParams;
  entry.body = std::move(st.fn);
  program.entries.push_back(std::move(entry));
}

void Sema::elaborateInfer(FunctionState &st, Entry &entry) {
  EntryState &es = *st.entry;
  const ast::StmtList &body = es.decl->body;
  const char *allowed = "input declarations, let bindings, rebindings, "
                        "asserts and output declarations";
  // Inputs first, so that their order in the file does not matter.
  std::optional<int64_t> batch;
  std::string batchInput;
  for (const ast::StmtPtr &s : body) {
    const auto *in = s ? s->as<ast::InputStmt>() : nullptr;
    if (!in)
      continue;
    std::string what = "input '" + in->name + "'";
    std::optional<TensorType> type = evalTensorType(in->type, what);
    if (type && type->shape.empty()) {
      diag.error(in->type.loc, what +
                                   " needs the batch as its first "
                                   "dimension, such as f32[B, 784]; got " +
                                   type->str());
      type.reset();
    } else if (type && batch && type->shape[0] != *batch) {
      diag.error(in->type.loc,
                 what + " has " + std::to_string(type->shape[0]) +
                     " rows, but input '" + batchInput + "' has " +
                     std::to_string(*batch) +
                     "; all inputs share their first (batch) dimension");
      type.reset();
    }
    if (!type) {
      define(in->name, CValue(), in->loc, BindingKind::Input);
      continue;
    }
    if (!batch) {
      batch = type->shape[0];
      batchInput = in->name;
    }
    int id = st.fn.addValue(*type);
    if (!define(in->name, CValue::ofTensor(id), in->loc, BindingKind::Input))
      continue;
    st.fn.args.push_back(id);
    st.fn.argNames.push_back(in->name);
    entry.inputNames.push_back(in->name);
  }
  std::map<std::string, SourceLoc> outputs;
  bool anyInput = false;
  for (const ast::StmtPtr &s : body) {
    if (!s)
      continue;
    if (st.stopped && s->kind != ast::Stmt::Kind::Input)
      continue; // a failed assert: what it guards is not elaborated
    switch (s->kind) {
    case ast::Stmt::Kind::Input:
      anyInput = true;
      break;
    case ast::Stmt::Kind::Let:
    case ast::Stmt::Kind::Assign: // rebinds a let or an input, as in blocks
    case ast::Stmt::Kind::Assert:
      execStmt(*s);
      break;
    case ast::Stmt::Kind::Output: {
      const auto &out = *s->as<ast::OutputStmt>();
      auto [it, fresh] = outputs.emplace(out.name, out.loc);
      if (!fresh) {
        diag.error(out.loc, "output '" + out.name + "' is declared twice");
        diag.note(it->second, "first declared here");
        break;
      }
      st.inMetrics = true; // accuracy(...) may appear inside an output expression
      CValue v = eval(out.value.get());
      st.inMetrics = false;
      if (v.kind == CValue::Kind::None)
        break;
      const TensorType *t = v.isTensor() ? &st.builder.typeOf(v) : nullptr;
      if (!t) {
        diag.error(out.value->loc, "output '" + out.name +
                                       "' must be a tensor, got " +
                                       describe(v));
      } else if (batch && (t->shape.empty() || t->shape[0] != *batch)) {
        diag.error(out.value->loc,
                   "output '" + out.name + "' is " + t->str() +
                       "; outputs keep the batch (" + std::to_string(*batch) +
                       " rows) as their first dimension, so that inputs can "
                       "be processed in batches");
      } else {
        st.fn.results.push_back(v.tensor);
        entry.outputNames.push_back(out.name);
      }
      break;
    }
    default:
      rejectEntryStmt(*s, es.label, allowed);
      break;
    }
  }
  if (!anyInput)
    diag.error(entry.loc, es.label + " has no inputs; declare them with "
                                     "`input NAME: TYPE`, the batch first");
  if (outputs.empty() && !st.stopped)
    diag.error(entry.loc, es.label + " has no outputs; declare them with "
                                     "`output NAME = EXPR`");
  if (batch)
    entry.settings["batch"] = Attr(*batch);
}

void Sema::bindBatchFields(FunctionState &st, Entry &entry, int dataSet,
                           int64_t batch, SourceLoc batchLoc) {
  EntryState &es = *st.entry;
  const DataSet &ds = program.dataSets[dataSet];
  entry.dataName = ds.name;
  bool ok = true;
  for (const DataField &f : ds.fields) {
    TensorType t;
    t.dtype = f.type.dtype;
    t.shape.push_back(batch);
    t.shape.insert(t.shape.end(), f.type.shape.begin(), f.type.shape.end());
    if (!checkedElementCount(t.shape)) {
      diag.error(batchLoc, "batch." + f.name + " would be " + t.str() +
                               ", which has too many elements");
      ok = false;
      continue;
    }
    int id = st.fn.addValue(t);
    st.fn.args.push_back(id);
    st.fn.argNames.push_back(f.name);
    entry.inputNames.push_back(f.name);
    es.batchFields[f.name] = CValue::ofTensor(id);
    es.fieldNames.push_back(f.name);
  }
  es.batchReady = ok;
}

void Sema::checkEvalData(int trainData, int evalData, SourceLoc loc) {
  const DataSet &train = program.dataSets[trainData];
  const DataSet &eval = program.dataSets[evalData];
  std::string problem;
  for (const DataField &f : train.fields) {
    auto it =
        std::find_if(eval.fields.begin(), eval.fields.end(),
                     [&](const DataField &g) { return g.name == f.name; });
    if (it == eval.fields.end())
      problem = "it has no field '" + f.name + "'";
    else if (it->type != f.type)
      problem = "its field '" + f.name + "' is " + it->type.str() +
                " per sample, but " + f.type.str() + " in '" + train.name + "'";
    if (!problem.empty())
      break;
  }
  if (problem.empty())
    for (const DataField &g : eval.fields)
      if (std::none_of(train.fields.begin(), train.fields.end(),
                       [&](const DataField &f) { return f.name == g.name; }))
        problem =
            "it has a field '" + g.name + "' that '" + train.name + "' lacks";
  if (!problem.empty())
    diag.error(loc, "eval data '" + eval.name +
                        "' must have the fields of the training data '" +
                        train.name + "': " + problem);
}

} // namespace modelc::sema
