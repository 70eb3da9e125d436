// The manifest flatbuffer from a planned module: parameters and buffers with
// their arena offsets, data sets, entries (ManifestEntries.cpp), the
// function table and, for the cuda target, the GPU program (ManifestGpu.cpp).
#include "codegen/manifest/ManifestWriter.h"
#include "codegen/manifest/ManifestEntries.h"
#include "codegen/manifest/ValueChecks.h"

#include "dialects/mdl/MdlOps.h"
#include "passes/EntryUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
namespace fb = modelc::manifest;

namespace modelc {

namespace {

/// What the manifest says about one arena tensor.
struct TensorInfo {
  fb::DType dtype;
  std::vector<int64_t> shape;
  uint64_t offset, bytes;
};

/// Reads the type and the plan's `offset` of a declaration.
FailureOr<TensorInfo> getTensorInfo(Operation *decl, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<fb::DType> dtype =
      tensor ? getDType(tensor.getElementType()) : std::nullopt;
  if (!dtype)
    return decl->emitError("the manifest has no dtype for ") << type;
  auto offset = decl->getAttrOfType<IntegerAttr>("offset");
  if (!offset)
    return decl->emitError("no arena offset: run --mdl-plan-memory first");
  uint64_t bytes = (tensor.getElementTypeBitWidth() + 7) / 8;
  for (int64_t dim : tensor.getShape())
    bytes *= uint64_t(dim);
  return TensorInfo{*dtype, tensor.getShape().vec(), uint64_t(offset.getInt()),
                    bytes};
}

std::optional<fb::Role> getRole(StringRef role) {
  return llvm::StringSwitch<std::optional<fb::Role>>(role)
      .Case("grad", fb::Role::Grad)
      .Case("state", fb::Role::State)
      .Case("input", fb::Role::Input)
      .Case("output", fb::Role::Output)
      .Case("hyper", fb::Role::Hyper)
      .Case("window", fb::Role::Window)
      .Default(std::nullopt);
}

std::optional<fb::Phase> getPhase(StringRef phase) {
  return llvm::StringSwitch<std::optional<fb::Phase>>(phase)
      .Case("shared", fb::Phase::Shared)
      .Case("train", fb::Phase::Train)
      .Case("eval", fb::Phase::Eval)
      .Case("infer", fb::Phase::Infer)
      .Default(std::nullopt);
}

fb::SourceKind getSourceKind(mdl::DataSource source) {
  switch (source) {
  case mdl::DataSource::idx:
    return fb::SourceKind::Idx;
  case mdl::DataSource::npy:
    return fb::SourceKind::Npy;
  case mdl::DataSource::npz:
    return fb::SourceKind::Npz;
  case mdl::DataSource::file:
    return fb::SourceKind::File;
  }
  llvm_unreachable("unknown data source");
}

/// The manifest under construction: the tables in the order the Program
/// needs them, parameters first among the buffers.
class ManifestBuilder {
public:
  explicit ManifestBuilder(ModuleOp module) : module(module), names(module) {}

  LogicalResult addBuffers() {
    for (auto param : module.getOps<mdl::ParamOp>())
      if (failed(addBuffer(param, param.getType(),
                           param.getBuffer() ? fb::Role::ModuleBuffer
                                             : fb::Role::Param,
                           fb::Phase::Shared, "", param.getSymName())))
        return failure();
    for (auto buffer : module.getOps<mdl::BufferOp>()) {
      std::optional<fb::Role> role = getRole(buffer.getRole());
      std::optional<fb::Phase> phase = getPhase(buffer.getPhase());
      if (!role || !phase)
        return buffer.emitError("unknown buffer role or phase");
      if (*role == fb::Role::Grad)
        gradBuffers[buffer.getKey()] = buffers.size();
      bufferIndex[buffer.getSymName()] = buffers.size();
      if (failed(addBuffer(buffer, buffer.getType(), *role, *phase,
                           names(buffer.getEntry()), buffer.getKey())))
        return failure();
    }
    return success();
  }

  LogicalResult addParams() {
    unsigned index = 0;
    for (auto param : module.getOps<mdl::ParamOp>()) {
      FailureOr<TensorInfo> info = getTensorInfo(param, param.getType());
      if (failed(info))
        return failure();
      auto name = fbb.CreateString(param.getSymName().str());
      auto shape = fbb.CreateVector(info->shape);
      auto initArgs = fbb.CreateVector(param.getInitArgs().vec());
      fb::ParamBuilder entry(fbb);
      entry.add_name(name);
      entry.add_dtype(info->dtype);
      entry.add_shape(shape);
      entry.add_init(fb::InitKind(uint32_t(param.getInit())));
      entry.add_init_args(initArgs);
      entry.add_buffer(index++);
      auto grad = gradBuffers.find(param.getSymName());
      entry.add_grad_buffer(grad == gradBuffers.end() ? -1 : grad->second);
      params.push_back(entry.Finish());
    }
    return success();
  }

  /// The value checks on each field of data set `name`, from the bodies of
  /// the train entries that read it as their data or eval data (their block
  /// arguments are the fields, in order).
  std::vector<std::vector<ValueCheck>> fieldChecks(StringRef name,
                                                   size_t numFields) {
    std::vector<std::vector<ValueCheck>> checks(numFields);
    for (auto train : module.getOps<mdl::TrainOp>()) {
      StringAttr evalData;
      if (auto eval = train.getSettings().getAs<DictionaryAttr>("eval"))
        evalData = eval.getAs<StringAttr>("data");
      if (train.getData() != name && !(evalData && evalData == name))
        continue;
      Region &body = train.getBodyRegion();
      if (body.empty() || body.getNumArguments() != numFields)
        continue;
      for (BlockArgument arg : body.getArguments())
        for (ValueCheck &check : findValueChecks(arg))
          if (!llvm::is_contained(checks[arg.getArgNumber()], check))
            checks[arg.getArgNumber()].push_back(std::move(check));
    }
    return checks;
  }

  LogicalResult addDataSets() {
    for (auto data : module.getOps<mdl::DataOp>()) {
      std::vector<flatbuffers::Offset<fb::Field>> fields;
      std::vector<std::vector<ValueCheck>> checks = fieldChecks(
          data.getSymName(), size_t(llvm::range_size(data.getFields())));
      for (auto [index, field] : llvm::enumerate(data.getFields())) {
        auto type = cast<RankedTensorType>(field.getType());
        std::optional<fb::DType> dtype = getDType(type.getElementType());
        if (!dtype)
          return field.emitError("the manifest has no dtype for ") << type;
        auto name = fbb.CreateString(field.getName().str());
        auto shape = fbb.CreateVector(type.getShape().vec());
        auto path = fbb.CreateString(field.getPath().str());
        auto key = fbb.CreateString(field.getKey().value_or("").str());
        // `inner` is the underlying source of windows and the source itself
        // otherwise.
        fb::SourceKind source = getSourceKind(field.getSource());
        std::vector<flatbuffers::Offset<fb::ValueCheck>> checkTables;
        appendValueChecks(fbb, checks[index], 0, checkTables);
        auto checkVector = fbb.CreateVector(checkTables);
        fb::FieldBuilder entry(fbb);
        entry.add_name(name);
        entry.add_dtype(*dtype);
        entry.add_shape(shape);
        entry.add_source(field.getWindows() ? fb::SourceKind::Windows : source);
        entry.add_inner(source);
        entry.add_path(path);
        entry.add_key(key);
        entry.add_checks(checkVector);
        entry.add_window_stride(field.getStride().value_or(0));
        fields.push_back(entry.Finish());
      }
      dataSets.push_back(fb::CreateDataSetDirect(
          fbb, names(data.getSymName()).str().c_str(), &fields));
    }
    return success();
  }

  void addFunctions(ArrayRef<ProgramFunction> table) {
    for (const ProgramFunction &fn : table) {
      fb::FunctionKind kind = llvm::StringSwitch<fb::FunctionKind>(fn.kind)
                                  .Case("update", fb::FunctionKind::Update)
                                  .Case("eval", fb::FunctionKind::Eval)
                                  .Case("infer", fb::FunctionKind::Infer)
                                  .Case("update_chunk",
                                        fb::FunctionKind::UpdateChunk)
                                  .Default(fb::FunctionKind::FwdBwd);
      std::vector<uint32_t> window;
      if (auto symbols = fn.op->getAttrOfType<ArrayAttr>(kWindowAttrName))
        for (Attribute symbol : symbols)
          window.push_back(
              bufferIndex.lookup(cast<StringAttr>(symbol).getValue()));
      functions.push_back(fb::CreateFunctionDirect(
          fbb, fn.symbol.c_str(), kind, names(fn.entry).str().c_str(),
          fn.index, &window));
      symbols.push_back(fn.symbol);
    }
  }

  FailureOr<std::string> finish(ArrayRef<std::string> targets) {
    auto arena = module->getAttrOfType<IntegerAttr>("mdl.arena_bytes");
    auto persistent =
        module->getAttrOfType<IntegerAttr>("mdl.persistent_bytes");
    if (!arena || !persistent)
      return module.emitError("no memory plan: run --mdl-plan-memory first");
    FailureOr<FlatTables<fb::TrainEntry>> train =
        writeTrainEntries(fbb, module, names);
    FailureOr<FlatTables<fb::InferEntry>> infer =
        writeInferEntries(fbb, module, names);
    if (failed(train) || failed(infer))
      return failure();
    // With a GPU program (--mdl-serialize-gpu), the program is for cuda too.
    std::vector<std::string> allTargets = targets.vec();
    flatbuffers::Offset<fb::GpuProgram> gpu;
    if (module->hasAttr("mdl.gpu_program")) {
      FailureOr<flatbuffers::Offset<fb::GpuProgram>> program =
          writeGpuProgram(fbb, module, symbols);
      if (failed(program))
        return failure();
      gpu = *program;
      if (!llvm::is_contained(allTargets, "cuda"))
        allTargets.insert(allTargets.begin(), "cuda");
    }
    flatbuffers::Offset<fb::ScratchPeak> peak;
    if (auto dict = module->getAttrOfType<DictionaryAttr>("mdl.scratch_peak")) {
      auto function = dict.getAs<StringAttr>("function");
      auto live = dict.getAs<IntegerAttr>("live_bytes");
      auto byType = dict.getAs<ArrayAttr>("by_type");
      if (!function || !live || !byType)
        return module.emitError("internal error: a malformed mdl.scratch_peak");
      std::vector<flatbuffers::Offset<fb::DTypeBytes>> dtypes;
      for (Attribute entry : byType) {
        auto pair = dyn_cast<ArrayAttr>(entry);
        auto type = pair && pair.size() == 2 ? dyn_cast<TypeAttr>(pair[0])
                                             : TypeAttr();
        auto bytes = type ? dyn_cast<IntegerAttr>(pair[1]) : IntegerAttr();
        std::optional<fb::DType> dtype =
            type ? getDType(type.getValue()) : std::nullopt;
        if (!bytes || !dtype)
          return module.emitError("internal error: a malformed "
                                  "mdl.scratch_peak entry ")
                 << entry;
        dtypes.push_back(fb::CreateDTypeBytes(fbb, *dtype, bytes.getInt()));
      }
      peak = fb::CreateScratchPeakDirect(fbb, function.str().c_str(),
                                         live.getInt(), &dtypes);
    }
    auto sourceName = fbb.CreateString(stringAttr("mdl.source_name"));
    auto sourceHash = fbb.CreateString(stringAttr("mdl.source_hash"));
    auto targetNames = fbb.CreateVectorOfStrings(allTargets);
    auto paramTable = fbb.CreateVector(params);
    auto dataSetTable = fbb.CreateVector(dataSets);
    auto bufferTable = fbb.CreateVector(buffers);
    auto functionTable = fbb.CreateVector(functions);
    fb::ProgramBuilder program(fbb);
    program.add_version(1);
    program.add_source_name(sourceName);
    program.add_source_hash(sourceHash);
    program.add_targets(targetNames);
    program.add_arena_bytes(arena.getInt());
    program.add_persistent_bytes(persistent.getInt());
    if (!peak.IsNull())
      program.add_scratch_peak(peak);
    program.add_train(*train);
    program.add_infer(*infer);
    program.add_params(paramTable);
    program.add_datasets(dataSetTable);
    program.add_buffers(bufferTable);
    program.add_functions(functionTable);
    if (!gpu.IsNull())
      program.add_gpu(gpu);
    fbb.Finish(program.Finish());
    return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()),
                       fbb.GetSize());
  }

private:
  LogicalResult addBuffer(Operation *decl, Type type, fb::Role role,
                          fb::Phase phase, StringRef entry, StringRef key) {
    FailureOr<TensorInfo> info = getTensorInfo(decl, type);
    if (failed(info))
      return failure();
    auto name = SymbolTable::getSymbolName(decl).str();
    buffers.push_back(fb::CreateBufferDirect(
        fbb, name.c_str(), role, phase, entry.str().c_str(), key.str().c_str(),
        info->dtype, &info->shape, info->offset, info->bytes));
    return success();
  }

  std::string stringAttr(StringRef name) {
    auto attr = module->getAttrOfType<StringAttr>(name);
    return attr ? attr.str() : "";
  }

  ModuleOp module;
  UserNames names;
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  std::vector<flatbuffers::Offset<fb::Param>> params;
  std::vector<flatbuffers::Offset<fb::DataSet>> dataSets;
  std::vector<flatbuffers::Offset<fb::Function>> functions;
  std::vector<std::string> symbols;
  llvm::StringMap<int> gradBuffers;
  /// Each mdl.buffer's index in `buffers`, by symbol.
  llvm::StringMap<uint32_t> bufferIndex;
};

} // namespace

std::optional<fb::DType> getDType(Type type) {
  if (type.isF32())
    return fb::DType::F32;
  if (type.isF64())
    return fb::DType::F64;
  if (type.isF16())
    return fb::DType::F16;
  if (type.isBF16())
    return fb::DType::BF16;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  switch (integer.getWidth()) {
  case 1:
    return fb::DType::Bool;
  case 8:
    return integer.isSigned() ? std::nullopt : std::optional(fb::DType::U8);
  case 16:
    return integer.isSigned() ? std::nullopt : std::optional(fb::DType::U16);
  case 32:
    return integer.isUnsigned() ? std::nullopt : std::optional(fb::DType::I32);
  case 64:
    return integer.isUnsigned() ? std::nullopt : std::optional(fb::DType::I64);
  default:
    return std::nullopt;
  }
}

FailureOr<std::vector<ProgramFunction>>
collectProgramFunctions(ModuleOp module) {
  std::vector<ProgramFunction> table;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto kind = func->getAttrOfType<StringAttr>("mdl.function");
    if (!kind)
      continue;
    if (!llvm::is_contained({"fwd_bwd", "update", "update_chunk", "eval",
                             "infer"},
                            kind.getValue()))
      return func.emitError("unknown mdl.function kind '")
             << kind.getValue() << "'";
    auto entry = func->getAttrOfType<StringAttr>("mdl.entry");
    unsigned index = table.size();
    std::string symbol = "modelc_fn_" + std::to_string(index) + "_";
    for (char c : func.getSymName())
      symbol += llvm::isAlnum(c) || c == '_' ? c : '_';
    table.push_back(
        {func, symbol, kind.str(), entry ? entry.str() : "", index});
  }
  return table;
}

/// The functions the runtime calls for each entry are all in the table: a
/// train entry's fwd_bwd and update (eval is optional: fwd_bwd stands in),
/// an infer entry's infer. A program without one would fail only when it
/// runs, so the compiler refuses it (an internal error: the passes build
/// them for every entry).
static LogicalResult checkEntryFunctions(ModuleOp module,
                                         ArrayRef<ProgramFunction> functions) {
  auto require = [&](Operation *entry, StringRef kind) -> LogicalResult {
    StringRef name = SymbolTable::getSymbolName(entry).getValue();
    if (llvm::any_of(functions, [&](const ProgramFunction &fn) {
          return fn.entry == name && fn.kind == kind;
        }))
      return success();
    return entry->emitError("internal error: entry '")
           << name << "' has no " << kind << " function";
  };
  for (Operation &op : module.getOps()) {
    if (isa<mdl::TrainOp>(op) &&
        (failed(require(&op, "fwd_bwd")) || failed(require(&op, "update"))))
      return failure();
    if (isa<mdl::InferOp>(op) && failed(require(&op, "infer")))
      return failure();
  }
  return success();
}

FailureOr<std::string> writeManifest(ModuleOp module,
                                     ArrayRef<ProgramFunction> functions,
                                     ArrayRef<std::string> targets) {
  if (failed(checkEntryFunctions(module, functions)))
    return failure();
  ManifestBuilder builder(module);
  if (failed(builder.addBuffers()) || failed(builder.addParams()) ||
      failed(builder.addDataSets()))
    return failure();
  builder.addFunctions(functions);
  return builder.finish(targets);
}

} // namespace modelc
