// --mdl-build-entry-functions: gives every train and infer entry its
// buffers and its argument-less program functions (fwd_bwd, eval, infer),
// as docs/pipeline.md, stage 1, describes.
#include "passes/EntryUtils.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace modelc {
#define GEN_PASS_DEF_MDLBUILDENTRYFUNCTIONS
#include "passes/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;

namespace {

/// Outputs that `update` stores for every train entry, and with loss
/// scaling `found_inf` too; a metric may not take their names.
constexpr llvm::StringLiteral kUpdateOutputs[] = {"lr", "grad_norm"};
constexpr llvm::StringLiteral kReservedOutputs[] = {"lr", "grad_norm",
                                                    "found_inf"};

/// Declares the buffers of one entry and its functions right after the
/// entry op, in the order they are asked for.
class EntryBuilder {
public:
  EntryBuilder(Operation *entry, StringRef entryName, SymbolTable &symbols)
      : builder(entry), loc(entry->getLoc()), entryName(entryName),
        symbols(symbols) {
    builder.setInsertionPointAfter(entry);
  }

  /// `mdl.buffer @"ENTRY:KIND:KEY"`, or null after reporting a clash with
  /// an existing symbol (then failed() is true).
  mdl::BufferOp declare(StringRef kind, StringRef key, Type type,
                        StringRef role, StringRef phase) {
    std::string symbol = getBufferSymbol(entryName, kind, key);
    if (!checkFree(symbol))
      return {};
    mdl::BufferOp buffer =
        createBuffer(builder, loc, symbol, type, role, phase, key, entryName);
    symbols.insert(buffer);
    return buffer;
  }

  /// The function `@"ENTRY.KIND"`: loads `inputs` in place of `body`'s
  /// arguments, a copy of `body`, stores of what it yields into `outputs`.
  func::FuncOp buildFunction(StringRef kind, Block &body,
                             MutableArrayRef<mdl::BufferOp> inputs,
                             MutableArrayRef<mdl::BufferOp> outputs) {
    if (!checkFree(getFunctionSymbol(entryName, kind)))
      return {};
    func::FuncOp func = createEntryFunction(builder, loc, entryName, kind);
    symbols.insert(func);
    OpBuilder bodyBuilder = OpBuilder::atBlockBegin(&func.front());
    IRMapping mapping;
    for (auto [argument, buffer] : llvm::zip_equal(body.getArguments(), inputs))
      mapping.map(argument, bodyBuilder.create<mdl::LoadOp>(
                                argument.getLoc(), buffer.getType(),
                                buffer.getSymName()));
    for (Operation &op : body.without_terminator())
      bodyBuilder.clone(op, mapping);
    Operation *yield = body.getTerminator();
    for (auto [value, buffer] : llvm::zip_equal(yield->getOperands(), outputs))
      bodyBuilder.create<mdl::StoreOp>(yield->getLoc(), mapping.lookup(value),
                                       buffer.getSymName());
    bodyBuilder.create<func::ReturnOp>(loc);
    return func;
  }

  /// Whether a symbol could not be declared.
  bool failed() const { return clashed; }

private:
  bool checkFree(StringRef symbol) {
    if (Operation *existing = symbols.lookup(symbol)) {
      clashed = true;
      existing->emitError("cannot declare @\"")
          << symbol << "\" for entry @" << entryName
          << ": the symbol already exists";
      return false;
    }
    return true;
  }

  OpBuilder builder;
  Location loc;
  StringRef entryName;
  SymbolTable &symbols;
  bool clashed = false;
};

struct MdlBuildEntryFunctionsPass
    : modelc::impl::MdlBuildEntryFunctionsBase<MdlBuildEntryFunctionsPass> {
  void runOnOperation() override;

private:
  LogicalResult buildTrain(mdl::TrainOp train);
  LogicalResult buildInfer(mdl::InferOp infer);
  /// The batch types of the eval data set of `train`, or failure after
  /// reporting how its fields differ from the training data's.
  FailureOr<SmallVector<Type>> getEvalTypes(mdl::TrainOp train,
                                            StringRef evalData);

  SymbolTable *symbols = nullptr;
};

} // namespace

FailureOr<SmallVector<Type>>
MdlBuildEntryFunctionsPass::getEvalTypes(mdl::TrainOp train,
                                         StringRef evalData) {
  auto trainData = symbols->lookup<mdl::DataOp>(train.getData());
  auto eval = symbols->lookup<mdl::DataOp>(evalData);
  if (!trainData || !eval)
    return train.emitError("no data set @")
           << (trainData ? evalData : train.getData());
  auto trainFields = llvm::to_vector(trainData.getFields());
  auto evalFields = llvm::to_vector(eval.getFields());
  if (trainFields.size() != evalFields.size())
    return train.emitError("eval data @")
           << evalData << " has " << evalFields.size()
           << " fields but the training data @" << train.getData() << " has "
           << trainFields.size();
  for (auto [trainField, evalField] : llvm::zip_equal(trainFields, evalFields))
    if (trainField.getName() != evalField.getName() ||
        trainField.getType() != evalField.getType())
      return train.emitError("eval data @")
             << evalData << " has field '" << evalField.getName()
             << "' of type " << evalField.getType()
             << " where the training data @" << train.getData()
             << " has field '" << trainField.getName() << "' of type "
             << trainField.getType();
  return eval.getBatchTypes(*train.getBatchSize());
}

LogicalResult MdlBuildEntryFunctionsPass::buildTrain(mdl::TrainOp train) {
  StringRef name = train.getSymName();
  DictionaryAttr settings = train.getSettings();
  Block &body = *train.getBody();
  auto yield = cast<mdl::YieldOp>(body.getTerminator());
  auto outputNames = train.getOutputs().getAsValueRange<StringAttr>();
  for (StringRef output : outputNames)
    if (llvm::is_contained(kReservedOutputs, output))
      return train.emitError("metric name '")
             << output << "' is reserved for the optimizer's output";

  // The settings are checked before anything is created. The loss of one
  // micro-batch is averaged over `accumulate` of them, so each adds
  // 1/accumulate of its gradient (language spec, section 8).
  auto accumulate = settings.getAs<IntegerAttr>("accumulate");
  int64_t microBatches = accumulate ? accumulate.getInt() : 1;
  if (microBatches < 1)
    return train.emitError("settings 'accumulate' must be at least 1");
  std::optional<SmallVector<Type>> evalTypes;
  auto evalSettings = settings.getAs<DictionaryAttr>("eval");
  auto evalData =
      evalSettings ? evalSettings.getAs<StringAttr>("data") : StringAttr();
  if (evalData && !evalData.getValue().empty()) {
    FailureOr<SmallVector<Type>> types =
        getEvalTypes(train, evalData.getValue());
    if (failed(types))
      return failure();
    evalTypes = std::move(*types);
  }

  auto fields = llvm::to_vector(
      symbols->lookup<mdl::DataOp>(train.getData()).getFields());
  EntryBuilder builder(train, name, *symbols);
  SmallVector<mdl::BufferOp> inputs, outputs, evalInputs, evalOutputs;
  for (auto [field, argument] : llvm::zip_equal(fields, body.getArguments()))
    inputs.push_back(builder.declare("in", field.getName(), argument.getType(),
                                     "input", "train"));
  for (auto [output, value] : llvm::zip_equal(outputNames, yield.getValues()))
    outputs.push_back(
        builder.declare("out", output, value.getType(), "output", "train"));
  auto f32Scalar = RankedTensorType::get({}, Float32Type::get(&getContext()));
  for (StringRef output : kUpdateOutputs)
    builder.declare("out", output, f32Scalar, "output", "train");
  bool lossScaling = usesLossScaling(train);
  if (lossScaling)
    builder.declare("out", "found_inf", f32Scalar, "output", "train");
  auto f64Scalar = RankedTensorType::get({}, Float64Type::get(&getContext()));
  for (StringRef key : getHyperKeys())
    builder.declare("hyper", key, f64Scalar, "hyper", "train");
  if (evalTypes) {
    for (auto [field, type] : llvm::zip_equal(fields, *evalTypes))
      evalInputs.push_back(
          builder.declare("eval_in", field.getName(), type, "input", "eval"));
    for (auto [output, value] : llvm::zip_equal(outputNames, yield.getValues()))
      evalOutputs.push_back(builder.declare("eval_out", output, value.getType(),
                                            "output", "eval"));
  }
  if (builder.failed())
    return failure();

  func::FuncOp fwdBwd = builder.buildFunction("fwd_bwd", body, inputs, outputs);
  if (!fwdBwd)
    return failure();
  // f16: the backward's seed is also multiplied by the loss scale, read
  // from its hyper (torch.amp.GradScaler's scale(loss)).
  Builder attrs(&getContext());
  SmallVector<NamedAttribute> request = {
      attrs.getNamedAttr("loss", FlatSymbolRefAttr::get(
                                     outputs.front().getSymNameAttr())),
      attrs.getNamedAttr("scale", attrs.getF64FloatAttr(1.0 / microBatches))};
  if (lossScaling)
    request.push_back(attrs.getNamedAttr(
        "loss_scale",
        FlatSymbolRefAttr::get(&getContext(),
                               getBufferSymbol(name, "hyper", "loss_scale"))));
  fwdBwd->setAttr(kAutodiffAttrName, attrs.getDictionaryAttr(request));
  if (evalTypes &&
      !builder.buildFunction("eval", body, evalInputs, evalOutputs))
    return failure();
  return success();
}

LogicalResult MdlBuildEntryFunctionsPass::buildInfer(mdl::InferOp infer) {
  Block &body = *infer.getBody();
  Operation *yield = body.getTerminator();
  EntryBuilder builder(infer, infer.getSymName(), *symbols);
  SmallVector<mdl::BufferOp> inputs, outputs;
  for (auto [input, argument] :
       llvm::zip_equal(infer.getInputs().getAsValueRange<StringAttr>(),
                       body.getArguments()))
    inputs.push_back(
        builder.declare("in", input, argument.getType(), "input", "infer"));
  for (auto [output, value] :
       llvm::zip_equal(infer.getOutputs().getAsValueRange<StringAttr>(),
                       yield->getOperands()))
    outputs.push_back(
        builder.declare("out", output, value.getType(), "output", "infer"));
  if (builder.failed())
    return failure();
  return success(!!builder.buildFunction("infer", body, inputs, outputs));
}

void MdlBuildEntryFunctionsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbolTable(module);
  symbols = &symbolTable;
  // Collected first: building inserts ops after each entry.
  SmallVector<Operation *> entries;
  for (Operation &op : module.getOps())
    if (isa<mdl::TrainOp, mdl::InferOp>(op))
      entries.push_back(&op);
  for (Operation *entry : entries) {
    LogicalResult built = isa<mdl::TrainOp>(entry)
                              ? buildTrain(cast<mdl::TrainOp>(entry))
                              : buildInfer(cast<mdl::InferOp>(entry));
    if (failed(built))
      return signalPassFailure();
  }
}
