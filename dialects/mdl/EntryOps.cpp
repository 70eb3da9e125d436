// Declarations and entry points: param, param_ref, data, field, train, infer
// and constant.
#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mdl;

/// Every name in `names` (a string array attribute) is non-empty and unique;
/// `what` says what they name.
static LogicalResult verifyUniqueNames(Operation *op, StringRef what,
                                       ArrayAttr names) {
  llvm::StringSet<> seen;
  for (StringRef name : names.getAsValueRange<StringAttr>()) {
    if (name.empty())
      return op->emitOpError() << what << " names must not be empty";
    if (!seen.insert(name).second)
      return op->emitOpError()
             << what << " name \"" << name << "\" appears twice";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// param, param_ref
//===----------------------------------------------------------------------===//

unsigned ParamOp::getNumInitArgs(InitKind kind) {
  switch (kind) {
  case InitKind::zeros:
  case InitKind::ones:
  case InitKind::xavier_uniform:
    return 0;
  case InitKind::full:
  case InitKind::kaiming_uniform:
  case InitKind::truncated_normal:
    return 1;
  case InitKind::normal:
  case InitKind::uniform:
    return 2;
  }
  llvm_unreachable("unknown initialiser");
}

/// The initialiser's arguments as users write them, for error messages.
static StringRef getInitArgNames(InitKind kind) {
  switch (kind) {
  case InitKind::full:
    return "(value)";
  case InitKind::normal:
    return "(mean, std)";
  case InitKind::uniform:
    return "(lo, hi)";
  case InitKind::kaiming_uniform:
    return "(fan_in)";
  case InitKind::truncated_normal:
    return "(std)";
  default:
    return "";
  }
}

LogicalResult ParamOp::verify() {
  InitKind init = getInit();
  StringRef initName = stringifyInitKind(init);
  ArrayRef<double> args = getInitArgs();
  unsigned expected = getNumInitArgs(init);
  if (args.size() != expected) {
    InFlightDiagnostic diag = emitOpError("initialiser '")
                              << initName << "' takes " << expected
                              << (expected == 1 ? " argument" : " arguments");
    if (expected > 0)
      diag << " " << getInitArgNames(init);
    return diag << ", got " << args.size();
  }
  if (llvm::any_of(args, [](double arg) { return !std::isfinite(arg); }))
    return emitOpError("initialiser arguments must be finite");
  Type element = getType().getElementType();
  if (!isa<FloatType>(element)) {
    if (!getBuffer())
      return emitOpError("a parameter must hold floats, got ") << getType();
    if (init != InitKind::zeros && init != InitKind::ones &&
        init != InitKind::full)
      return emitOpError("an integer buffer is initialised with zeros, ones "
                         "or full, not ")
             << initName;
  }
  switch (init) {
  case InitKind::normal:
  case InitKind::truncated_normal:
    if (args.back() < 0)
      return emitOpError() << initName << "'s std must not be negative, got "
                           << args.back();
    break;
  case InitKind::uniform:
    if (args[0] > args[1])
      return emitOpError("uniform's lower bound ")
             << args[0] << " is above its upper bound " << args[1];
    break;
  case InitKind::kaiming_uniform:
    if (args[0] <= 0)
      return emitOpError("kaiming_uniform's fan_in must be positive, got ")
             << args[0];
    break;
  case InitKind::xavier_uniform:
    if (getType().getRank() < 2)
      return emitOpError("xavier_uniform needs a parameter of rank at least "
                         "2 to compute its fans, got ")
             << getType();
    break;
  default:
    break;
  }
  return success();
}

void ParamRefOp::build(OpBuilder &builder, OperationState &state,
                       ParamOp param) {
  build(builder, state, param.getType(), param.getSymName());
}

LogicalResult ParamRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, getNameAttr());
  if (!param)
    return emitOpError() << getNameAttr() << " does not name an mdl.param";
  if (param.getBuffer())
    return emitOpError() << getNameAttr()
                         << " is a buffer, read with mdl.load (a buffer is "
                            "never on a gradient path)";
  if (param.getType() != getType())
    return emitOpError("type ")
           << getType() << " does not match the type " << param.getType()
           << " of parameter " << getNameAttr();
  return success();
}

//===----------------------------------------------------------------------===//
// data, field
//===----------------------------------------------------------------------===//

void DataOp::build(OpBuilder &builder, OperationState &state,
                   StringRef symName) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(symName));
  state.addRegion()->emplaceBlock();
}

SmallVector<Type> DataOp::getBatchTypes(int64_t batch) {
  SmallVector<Type> types;
  for (FieldOp field : getFields()) {
    RankedTensorType sample = field.getType();
    SmallVector<int64_t> shape = {batch};
    llvm::append_range(shape, sample.getShape());
    types.push_back(sample.clone(shape));
  }
  return types;
}

LogicalResult DataOp::verifyRegions() {
  llvm::StringSet<> names;
  for (Operation &op : *getBody()) {
    auto field = dyn_cast<FieldOp>(op);
    if (!field)
      return emitOpError("body may only hold mdl.field ops, found '")
             << op.getName() << "'";
    if (!names.insert(field.getName()).second)
      return field.emitOpError("field \"")
             << field.getName() << "\" is declared twice";
  }
  if (names.empty())
    return emitOpError("must declare at least one field");
  return success();
}

LogicalResult FieldOp::verify() {
  if (getName().empty())
    return emitOpError("field name must not be empty");
  if (getPath().empty())
    return emitOpError("path must not be empty");
  bool isNpz = getSource() == DataSource::npz;
  if (isNpz && !getKey())
    return emitOpError("an npz source needs the member's key");
  if (!isNpz && getKey())
    return emitOpError("key is only valid with an npz source");
  if (getWindows() && getType().getRank() != 1)
    return emitOpError("windows needs a 1-D field (the window length), got ")
           << getType();
  if (std::optional<int64_t> stride = getStride()) {
    if (!getWindows())
      return emitOpError("stride is only valid with windows");
    if (*stride < 1)
      return emitOpError("stride must be at least 1, got ") << *stride;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// train
//===----------------------------------------------------------------------===//

static std::optional<int64_t> readBatchSize(DictionaryAttr settings) {
  auto batch = settings
                   ? settings.getAs<IntegerAttr>(TrainOp::getBatchSettingName())
                   : IntegerAttr();
  if (!batch)
    return std::nullopt;
  return batch.getValue().getSExtValue();
}

void TrainOp::build(OpBuilder &builder, OperationState &state,
                    StringRef symName, StringRef data,
                    ArrayRef<StringRef> outputs, DictionaryAttr settings,
                    TypeRange argTypes) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(symName));
  state.addAttribute(getDataAttrName(state.name),
                     FlatSymbolRefAttr::get(builder.getContext(), data));
  state.addAttribute(getOutputsAttrName(state.name),
                     builder.getStrArrayAttr(outputs));
  state.addAttribute(getSettingsAttrName(state.name),
                     settings ? settings : builder.getDictionaryAttr({}));
  Block &body = state.addRegion()->emplaceBlock();
  for (Type type : argTypes)
    body.addArgument(type, state.location);
}

void TrainOp::build(OpBuilder &builder, OperationState &state,
                    StringRef symName, DataOp data, ArrayRef<StringRef> outputs,
                    DictionaryAttr settings) {
  std::optional<int64_t> batch = readBatchSize(settings);
  build(builder, state, symName, data.getSymName(), outputs, settings,
        batch ? data.getBatchTypes(*batch) : SmallVector<Type>());
}

std::optional<int64_t> TrainOp::getBatchSize() {
  return readBatchSize(getSettings());
}

LogicalResult TrainOp::verifyRegions() {
  ArrayAttr outputs = getOutputs();
  if (outputs.empty() || cast<StringAttr>(outputs[0]).getValue() != "loss")
    return emitOpError("outputs must start with \"loss\"");
  if (failed(verifyUniqueNames(*this, "output", outputs)))
    return failure();
  std::optional<int64_t> batch = getBatchSize();
  if (!batch || *batch < 1)
    return emitOpError("settings must hold a positive integer 'batch'");
  auto yield = dyn_cast<YieldOp>(getBody()->getTerminator());
  if (!yield)
    return emitOpError("body must end with mdl.yield");
  if (yield.getNumOperands() != outputs.size())
    return yield.emitOpError("yields ")
           << yield.getNumOperands() << " values but the enclosing mdl.train "
           << "names " << outputs.size() << " outputs";
  for (auto [index, value] : llvm::enumerate(yield.getValues())) {
    auto type = cast<RankedTensorType>(value.getType());
    StringRef name = cast<StringAttr>(outputs[index]).getValue();
    if (index == 0 &&
        (type.getRank() != 0 || !isa<FloatType>(type.getElementType())))
      return yield.emitOpError("the loss must be a floating-point scalar, got ")
             << type;
    if (type.getRank() != 0)
      return yield.emitOpError("metric \"")
             << name << "\" must be a scalar, got " << type;
  }
  return success();
}

LogicalResult TrainOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto data = symbolTable.lookupNearestSymbolFrom<DataOp>(*this, getDataAttr());
  if (!data)
    return emitOpError("data ")
           << getDataAttr() << " does not name an mdl.data";
  std::optional<int64_t> batch = getBatchSize();
  if (!batch)
    return success(); // verifyRegions reports it
  SmallVector<Type> expected = data.getBatchTypes(*batch);
  Block *body = getBody();
  if (body->getNumArguments() != expected.size())
    return emitOpError("body has ")
           << body->getNumArguments() << " arguments but data " << getDataAttr()
           << " has " << expected.size() << " fields";
  for (auto [index, argument, field, type] :
       llvm::enumerate(body->getArguments(), data.getFields(), expected)) {
    if (argument.getType() != type)
      return emitOpError("argument #")
             << index << " (field \"" << field.getName() << "\") has type "
             << argument.getType() << ", expected " << type
             << " (the field's type with the batch " << *batch << " prepended)";
  }
  return success();
}

void TrainOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  auto data =
      SymbolTable::lookupNearestSymbolFrom<DataOp>(*this, getDataAttr());
  if (!data)
    return;
  for (auto [argument, field] :
       llvm::zip(region.getArguments(), data.getFields()))
    setNameFn(argument, field.getName());
}

//===----------------------------------------------------------------------===//
// infer
//===----------------------------------------------------------------------===//

void InferOp::build(OpBuilder &builder, OperationState &state,
                    StringRef symName, ArrayRef<StringRef> inputs,
                    TypeRange inputTypes, ArrayRef<StringRef> outputs) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(symName));
  state.addAttribute(getInputsAttrName(state.name),
                     builder.getStrArrayAttr(inputs));
  state.addAttribute(getOutputsAttrName(state.name),
                     builder.getStrArrayAttr(outputs));
  Block &body = state.addRegion()->emplaceBlock();
  for (Type type : inputTypes)
    body.addArgument(type, state.location);
}

LogicalResult InferOp::verifyRegions() {
  ArrayAttr inputs = getInputs(), outputs = getOutputs();
  if (failed(verifyUniqueNames(*this, "input", inputs)) ||
      failed(verifyUniqueNames(*this, "output", outputs)))
    return failure();
  if (inputs.empty())
    return emitOpError("must have at least one input");
  Block *body = getBody();
  if (body->getNumArguments() != inputs.size())
    return emitOpError("body has ")
           << body->getNumArguments() << " arguments but " << inputs.size()
           << " inputs are named";
  auto yield = dyn_cast<YieldOp>(body->getTerminator());
  if (!yield)
    return emitOpError("body must end with mdl.yield");
  if (yield.getNumOperands() != outputs.size())
    return yield.emitOpError("yields ")
           << yield.getNumOperands() << " values but the enclosing mdl.infer "
           << "names " << outputs.size() << " outputs";

  // Inputs and outputs are processed in batches: all lead with one batch.
  StringRef firstInput = cast<StringAttr>(inputs[0]).getValue();
  auto firstType = cast<RankedTensorType>(body->getArgument(0).getType());
  if (firstType.getRank() == 0)
    return emitOpError("input \"")
           << firstInput << "\" must lead with the batch dimension, got "
           << firstType;
  int64_t batch = firstType.getDimSize(0);
  auto checkBatch = [&](Operation *op, StringRef what, Attribute name,
                        Type type) -> LogicalResult {
    auto tensor = cast<RankedTensorType>(type);
    if (tensor.getRank() > 0 && tensor.getDimSize(0) == batch)
      return success();
    return op->emitOpError()
           << what << " \"" << cast<StringAttr>(name).getValue()
           << "\" must lead with the batch dimension " << batch
           << " (of input \"" << firstInput << "\"), got " << type;
  };
  for (auto [name, argument] : llvm::zip(inputs, body->getArguments()))
    if (failed(checkBatch(*this, "input", name, argument.getType())))
      return failure();
  for (auto [name, value] : llvm::zip(outputs, yield.getValues()))
    if (failed(checkBatch(yield, "output", name, value.getType())))
      return failure();
  return success();
}

void InferOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  for (auto [argument, name] : llvm::zip(
           region.getArguments(), getInputs().getAsValueRange<StringAttr>()))
    setNameFn(argument, name);
}

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

void ConstantOp::build(OpBuilder &builder, OperationState &state,
                       RankedTensorType type, double value) {
  Type elementType = type.getElementType();
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(elementType))
    element = builder.getFloatAttr(floatType, value);
  else if (elementType.isInteger(1))
    element = builder.getBoolAttr(value != 0);
  else
    element = builder.getIntegerAttr(elementType, static_cast<int64_t>(value));
  build(builder, state,
        cast<ElementsAttr>(DenseElementsAttr::get(type, element)));
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }
