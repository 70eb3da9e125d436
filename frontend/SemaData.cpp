// Data declarations (spec §7): per-sample field types evaluated with the
// file's consts, and their sources idx/npy/npz/file, optionally cut into
// windows. Each declaration becomes one DataSet, made when the main file
// declares it or an entry first uses an imported one.
#include "frontend/Sema.h"

namespace modelc::sema {

namespace {
/// The names of schema/DataSources.def.
const std::vector<std::string> kSourceNames = {
#define MODELC_DATA_SOURCE(KIND, NAME, ARGS) #NAME,
#include "schema/DataSources.def"
};

/// "idx(PATH), npy(PATH), ... and windows(SOURCE, stride = K)".
const std::string kSources = joinWithAnd({
#define MODELC_DATA_SOURCE(KIND, NAME, ARGS) #NAME "(" ARGS ")",
#include "schema/DataSources.def"
});
} // namespace

std::optional<DataSource> Sema::evalDataSource(const ast::Expr *e,
                                               const TensorType &type,
                                               bool inWindows) {
  if (!e)
    return std::nullopt;
  const auto *call = e->as<ast::CallExpr>();
  const auto *name =
      call && call->callee ? call->callee->as<ast::NameExpr>() : nullptr;
  if (!name) {
    diag.error(e->loc, std::string("a data field needs a source: ") + kSources +
                           "; got " + exprText(e));
    return std::nullopt;
  }
  DataSource src;
  src.kind = name->name;
  if (src.kind == "windows") {
    if (inWindows) {
      diag.error(e->loc, "windows(...) cannot be nested");
      return std::nullopt;
    }
    if (call->args.size() != 1 || call->kwargs.size() > 1 ||
        (call->kwargs.size() == 1 && call->kwargs[0].name != "stride")) {
      diag.error(e->loc, "'windows' takes one source and an optional "
                         "stride, as in windows(file(\"tokens.bin\"), "
                         "stride = 1)");
      return std::nullopt;
    }
    std::optional<DataSource> inner =
        evalDataSource(call->args[0].get(), type, true);
    if (!inner)
      return std::nullopt;
    if (!call->kwargs.empty()) {
      const ast::KeywordArg &arg = call->kwargs[0];
      CValue stride = eval(arg.value.get());
      if (stride.kind != CValue::Kind::Int || stride.i < 1 ||
          stride.i > INT32_MAX) {
        diag.error(arg.loc, "the 'stride' of windows(...) is the number of "
                            "tokens between window starts, an int from 1 "
                            "to " +
                                std::to_string(INT32_MAX) + ", got " +
                                describe(stride));
        return std::nullopt;
      }
      inner->stride = stride.i;
    }
    if (type.shape.size() != 1) {
      diag.error(e->loc, "windows(...) cuts 1-D windows of a token stream; "
                         "the field type must be 1-D, such as u16[T + 1], "
                         "got " +
                             type.str());
      return std::nullopt;
    }
    if (type.shape[0] < 2) {
      diag.error(e->loc, "a window needs at least 2 tokens (inputs and "
                         "their next tokens), got " +
                             type.str());
      return std::nullopt;
    }
    inner->windows = true;
    return inner;
  }
  std::vector<ConstParam> params = {{"path", CValue::Kind::String, {}}};
  if (src.kind == "npz")
    params.push_back({"key", CValue::Kind::String, {}});
  else if (!isDataSourceName(src.kind)) { // windows returned above
    diag.error(name->loc, "unknown data source '" + src.kind + "'" +
                              didYouMean(src.kind, kSourceNames) +
                              "; sources are " + kSources);
    return std::nullopt;
  }
  std::optional<std::vector<CValue>> args =
      bindConstArgs(*call, src.kind, params);
  if (!args)
    return std::nullopt;
  src.path = (*args)[0].s;
  if (src.path.empty()) {
    diag.error(e->loc, "the path of '" + src.kind + "' is empty");
    return std::nullopt;
  }
  if (src.kind == "npz") {
    src.key = (*args)[1].s;
    if (src.key.empty()) {
      diag.error(e->loc, "the member key of 'npz' is empty");
      return std::nullopt;
    }
  }
  return src;
}

int Sema::dataSetIndex(int module, const std::string &name, SourceLoc useLoc) {
  auto cached = dataSetByName.find({module, name});
  if (cached != dataSetByName.end())
    return cached->second;
  const ModuleInfo &mod = *modules[module];
  auto declIt = mod.data.find(name);
  if (declIt == mod.data.end()) {
    diag.error(useLoc, "no data declaration '" + name + "'");
    return -1;
  }
  const ast::DataDecl &decl = *declIt->second;
  unsigned errorsBefore = diag.errorCount();
  FunctionState scratch(module, diag);
  scratch.scopes.emplace_back();
  scratch.fn.symbol = "<data>";
  frames.push_back(&scratch);

  DataSet ds;
  ds.name = mod.qualName.empty() ? name : mod.qualName + "." + name;
  ds.loc = decl.loc;
  for (const ast::StmtPtr &s : decl.settings) {
    if (!s)
      continue;
    const auto *assign = s->as<ast::AssignStmt>();
    diag.error(s->loc, (assign ? "unknown data setting '" + assign->name + "'"
                               : std::string("unexpected statement")) +
                           "; data declarations have no settings, only fields "
                           "`NAME: TYPE = SOURCE`");
  }
  std::map<std::string, SourceLoc> seen;
  for (const ast::DataField &f : decl.fields) {
    auto [it, fresh] = seen.emplace(f.name, f.loc);
    if (!fresh) {
      diag.error(f.loc, "field '" + f.name + "' is declared twice in data '" +
                            name + "'");
      diag.note(it->second, "first declared here");
      continue;
    }
    std::optional<TensorType> type =
        evalTensorType(f.type, "field '" + f.name + "'");
    if (!type)
      continue;
    std::optional<DataSource> src =
        evalDataSource(f.source.get(), *type, false);
    if (!src)
      continue;
    ds.fields.push_back(DataField{f.name, *type, *src, f.loc});
  }
  if (decl.fields.empty())
    diag.error(decl.loc, "data '" + name +
                             "' has no fields; declare them as "
                             "`NAME: TYPE = SOURCE`");
  frames.pop_back();

  int index = -1;
  if (diag.errorCount() == errorsBefore) {
    index = static_cast<int>(program.dataSets.size());
    program.dataSets.push_back(std::move(ds));
  }
  dataSetByName[{module, name}] = index;
  return index;
}

int Sema::resolveDataRef(const ast::Expr *e, const std::string &what) {
  if (!e)
    return -1;
  int module = cur().module;
  std::string name;
  SourceLoc loc = e->loc;
  const auto *member = e->as<ast::MemberExpr>();
  const auto *alias =
      member && member->base ? member->base->as<ast::NameExpr>() : nullptr;
  if (const auto *n = e->as<ast::NameExpr>()) {
    name = n->name;
  } else if (alias && importedModule(alias->name)) {
    module = *importedModule(alias->name);
    if (module < 0)
      return -1;
    name = member->field;
    loc = member->fieldLoc.isValid() ? member->fieldLoc : member->loc;
  } else {
    diag.error(e->loc,
               what + " must name a data declaration, got " + exprText(e));
    return -1;
  }
  const ModuleInfo &mod = *modules[module];
  if (!mod.data.count(name)) {
    std::vector<std::string> names;
    for (const auto &d : mod.data)
      names.push_back(d.first);
    diag.error(loc, "'" + name + "' is not a data declaration" +
                        didYouMean(name, names) +
                        (names.empty()
                             ? std::string("; '") + mod.path + "' declares none"
                             : "; data declarations: " + joinNames(names)));
    return -1;
  }
  return dataSetIndex(module, name, loc);
}

} // namespace modelc::sema
