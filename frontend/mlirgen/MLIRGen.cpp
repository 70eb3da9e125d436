// MLIRGen: the module structure. Parameters, data sets, one private function
// per specialised block and one mdl.train / mdl.infer per entry, in that
// order, as docs/dialect.md shows.
#include "frontend/mlirgen/MLIRGen.h"
#include "frontend/mlirgen/Emitter.h"

#include "dialects/mdl/MdlDialect.h"
#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

namespace modelc {

namespace {
using mlirgen::Emitter;
using mlirgen::ModuleSymbols;

mlir::LogicalResult emitParameter(Emitter &emitter, mlir::OpBuilder &builder,
                                  const Parameter &param) {
  mlir::MLIRContext *context = &emitter.getContext();
  mlir::Location loc = emitter.loc(param.loc);
  std::optional<mlir::mdl::InitKind> kind =
      mlir::mdl::symbolizeInitKind(param.init.kind);
  if (!kind)
    return mlir::emitError(loc)
           << "internal error: unknown initialiser '" << param.init.kind << "'";
  mlir::NamedAttrList attrs;
  attrs.append("sym_name", builder.getStringAttr(param.name));
  attrs.append("type", mlir::TypeAttr::get(emitter.tensorType(param.type)));
  attrs.append("init", mlir::mdl::InitKindAttr::get(context, *kind));
  attrs.append("init_args", builder.getDenseF64ArrayAttr(param.init.args));
  if (param.buffer)
    attrs.append("buffer", builder.getUnitAttr());
  builder.create<mlir::mdl::ParamOp>(loc, mlir::TypeRange(), mlir::ValueRange(),
                                     attrs.getAttrs());
  return mlir::success();
}

/// Marks `op`, whose symbol is `symbol`, with the program's `name` when the
/// two differ (ModuleSymbols).
void keepUserName(mlir::Operation *op, const std::string &symbol,
                  const std::string &name) {
  if (symbol != name)
    op->setAttr(mlir::mdl::MdlDialect::getUserNameAttrName(),
                mlir::StringAttr::get(op->getContext(), name));
}

mlir::LogicalResult emitDataSet(Emitter &emitter, mlir::OpBuilder &builder,
                                const DataSet &dataSet) {
  mlir::MLIRContext *context = &emitter.getContext();
  const std::string &symbol = emitter.getSymbols().dataSets.at(dataSet.name);
  auto dataOp =
      builder.create<mlir::mdl::DataOp>(emitter.loc(dataSet.loc), symbol);
  keepUserName(dataOp, symbol, dataSet.name);
  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(dataOp.getBody());
  for (const DataField &field : dataSet.fields) {
    mlir::Location loc = emitter.loc(field.loc);
    std::optional<mlir::mdl::DataSource> source =
        mlir::mdl::symbolizeDataSource(field.source.kind);
    if (!source)
      return mlir::emitError(loc) << "internal error: unknown data source '"
                                  << field.source.kind << "'";
    mlir::NamedAttrList attrs;
    attrs.append("name", builder.getStringAttr(field.name));
    attrs.append("type", mlir::TypeAttr::get(emitter.tensorType(field.type)));
    attrs.append("source", mlir::mdl::DataSourceAttr::get(context, *source));
    attrs.append("path", builder.getStringAttr(field.source.path));
    if (*source == mlir::mdl::DataSource::npz)
      attrs.append("key", builder.getStringAttr(field.source.key));
    if (field.source.windows)
      attrs.append("windows", builder.getUnitAttr());
    if (field.source.stride > 0)
      attrs.append("stride", builder.getI64IntegerAttr(field.source.stride));
    builder.create<mlir::mdl::FieldOp>(loc, mlir::TypeRange(),
                                       mlir::ValueRange(), attrs.getAttrs());
  }
  return mlir::success();
}

/// A private function: the tensor arguments, then one argument per param
/// slot, marked with the slot's path relative to the function's scope.
mlir::LogicalResult emitFunction(Emitter &emitter, mlir::OpBuilder &builder,
                                 const Function &fn,
                                 const std::string &symbol) {
  mlir::Location loc = emitter.loc(fn.loc);
  // Tensor arguments carry the block's location, param slots their `param`
  // statement's (or `&path`'s).
  std::vector<int> argIds = fn.args;
  llvm::SmallVector<mlir::Location> argLocs(fn.args.size(), loc);
  for (const ParamSlot &slot : fn.params) {
    argIds.push_back(slot.value);
    argLocs.push_back(emitter.loc(slot.loc));
  }
  mlir::FailureOr<llvm::SmallVector<mlir::Type>> argTypes =
      emitter.valueTypes(fn, argIds, loc);
  mlir::FailureOr<llvm::SmallVector<mlir::Type>> resultTypes =
      emitter.valueTypes(fn, fn.results, loc);
  if (mlir::failed(argTypes) || mlir::failed(resultTypes))
    return mlir::failure();

  auto func = builder.create<mlir::func::FuncOp>(
      loc, symbol, builder.getFunctionType(*argTypes, *resultTypes));
  func.setPrivate();
  llvm::StringRef paramAttrName = mlir::mdl::MdlDialect::getParamArgAttrName();
  for (auto [i, slot] : llvm::enumerate(fn.params))
    func.setArgAttr(fn.args.size() + i, paramAttrName,
                    builder.getStringAttr(slot.path));

  mlir::OpBuilder::InsertionGuard guard(builder);
  mlir::Block *entry =
      builder.createBlock(&func.getBody(), {}, *argTypes, argLocs);
  std::vector<mlir::Value> values(fn.values.size());
  for (auto [id, arg] : llvm::zip(argIds, entry->getArguments()))
    values[id] = arg;
  if (mlir::failed(emitter.emitOps(builder, fn, values)))
    return mlir::failure();
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> results =
      emitter.lookupValues(fn, fn.results, values, loc);
  if (mlir::failed(results))
    return mlir::failure();
  builder.create<mlir::func::ReturnOp>(loc, *results);
  return mlir::success();
}

/// An entry's body: the block that the train/infer builder created, whose
/// arguments are the body's tensor arguments, ended by mdl.yield.
mlir::LogicalResult emitEntryBody(Emitter &emitter, mlir::OpBuilder &builder,
                                  const Entry &entry, mlir::Block *block) {
  const Function &body = entry.body;
  mlir::Location loc = emitter.loc(entry.loc);
  if (block->getNumArguments() != body.args.size())
    return mlir::emitError(loc)
           << "internal error: entry '" << entry.name << "' has "
           << block->getNumArguments() << " block arguments for "
           << body.args.size() << " inputs";
  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(block);
  std::vector<mlir::Value> values(body.values.size());
  for (auto [id, arg] : llvm::zip(body.args, block->getArguments()))
    values[id] = arg;
  if (mlir::failed(emitter.emitOps(builder, body, values)))
    return mlir::failure();
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> results =
      emitter.lookupValues(body, body.results, values, loc);
  if (mlir::failed(results))
    return mlir::failure();
  builder.create<mlir::mdl::YieldOp>(loc, *results);
  return mlir::success();
}

/// The train settings with the eval data set's symbol for its name.
mlir::DictionaryAttr trainSettings(Emitter &emitter, const Entry &entry) {
  AttrDict settings = entry.settings;
  auto eval = settings.find("eval");
  if (eval != settings.end())
    if (auto *dict = std::get_if<AttrDict>(&eval->second.value))
      if (auto data = dict->find("data"); data != dict->end())
        if (auto *name = std::get_if<std::string>(&data->second.value))
          data->second = Attr(emitter.getSymbols().dataSets.at(*name));
  return emitter.settingsDict(settings);
}

mlir::LogicalResult emitEntry(Emitter &emitter, mlir::OpBuilder &builder,
                              const Entry &entry, const std::string &symbol) {
  mlir::Location loc = emitter.loc(entry.loc);
  // Also checks the input ids that emitEntryBody relies on.
  mlir::FailureOr<llvm::SmallVector<mlir::Type>> inputTypes =
      emitter.valueTypes(entry.body, entry.body.args, loc);
  if (mlir::failed(inputTypes))
    return mlir::failure();
  llvm::SmallVector<llvm::StringRef> inputs(entry.inputNames.begin(),
                                            entry.inputNames.end());
  llvm::SmallVector<llvm::StringRef> outputs(entry.outputNames.begin(),
                                             entry.outputNames.end());
  mlir::Operation *op;
  if (entry.kind == Entry::Kind::Train)
    op = builder.create<mlir::mdl::TrainOp>(
        loc, symbol, emitter.getSymbols().dataSets.at(entry.dataName), outputs,
        trainSettings(emitter, entry), *inputTypes);
  else
    op = builder.create<mlir::mdl::InferOp>(loc, symbol, inputs, *inputTypes,
                                            outputs);
  keepUserName(op, symbol, entry.name);
  return emitEntryBody(emitter, builder, entry, &op->getRegion(0).front());
}

mlir::LogicalResult emitModule(Emitter &emitter, mlir::ModuleOp module) {
  const Program &program = emitter.getProgram();
  mlir::OpBuilder builder = mlir::OpBuilder::atBlockEnd(module.getBody());
  for (const Parameter &param : program.params)
    if (mlir::failed(emitParameter(emitter, builder, param)))
      return mlir::failure();
  for (const DataSet &dataSet : program.dataSets)
    if (mlir::failed(emitDataSet(emitter, builder, dataSet)))
      return mlir::failure();
  const ModuleSymbols &symbols = emitter.getSymbols();
  for (auto [fn, symbol] :
       llvm::zip_equal(program.functions, symbols.functions))
    if (mlir::failed(emitFunction(emitter, builder, fn, symbol)))
      return mlir::failure();
  for (auto [entry, symbol] : llvm::zip_equal(program.entries, symbols.entries))
    if (mlir::failed(emitEntry(emitter, builder, entry, symbol)))
      return mlir::failure();
  return mlir::success();
}
} // namespace

mlir::OwningOpRef<mlir::ModuleOp> generateMLIR(const Program &program,
                                               const SourceManager &sm,
                                               mlir::MLIRContext &context) {
  context.getOrLoadDialect<mlir::mdl::MdlDialect>();
  context.getOrLoadDialect<mlir::func::FuncDialect>();
  Emitter emitter(program, sm, context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(
      mlir::FileLineColLoc::get(&context, program.mainFile, 1, 1));
  // Codegen embeds these in the program's manifest; the hash lets a
  // checkpoint refuse a different model.
  mlir::Builder builder(&context);
  (*module)->setAttr("mdl.source_name",
                     builder.getStringAttr(program.mainFile));
  (*module)->setAttr("mdl.source_hash",
                     builder.getStringAttr(program.sourceHash));
  if (mlir::failed(emitModule(emitter, *module)) ||
      mlir::failed(mlir::verify(*module)))
    return nullptr;
  return module;
}

} // namespace modelc
