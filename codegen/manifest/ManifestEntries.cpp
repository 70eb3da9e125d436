// The manifest's train and infer entries: the settings dictionary of each
// mdl.train (normalised by the frontend, docs/language.md) read field by
// field into the schema's tables.
#include "codegen/manifest/ManifestEntries.h"
#include "codegen/manifest/ValueChecks.h"

#include "dialects/mdl/MdlDialect.h"
#include "dialects/mdl/MdlOps.h"
#include "passes/EntryUtils.h"
#include "schema/Optimizers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
namespace fb = modelc::manifest;

namespace modelc {

namespace {

/// Typed reads of one settings dictionary. A missing key gives the default
/// (sub-dictionaries such as `checkpoint` are absent when unset); a key of
/// the wrong kind is an error, since the frontend and this reader must
/// agree on the dictionary's shape.
class Settings {
public:
  Settings(DictionaryAttr dict, Operation *op, std::string path)
      : dict(dict), op(op), path(std::move(path)) {}

  bool failed() const { return hasError; }

  Settings sub(StringRef name) {
    Attribute value = get(name);
    auto sub = dyn_cast_or_null<DictionaryAttr>(value);
    if (value && !sub)
      wrongKind(name, "a dictionary");
    return Settings(sub ? sub : DictionaryAttr::get(op->getContext()), op,
                    path + name.str() + ".");
  }
  bool has(StringRef name) const { return dict && dict.get(name); }
  int64_t getInt(StringRef name, int64_t otherwise = 0) {
    Attribute value = get(name);
    if (auto i = dyn_cast_or_null<IntegerAttr>(value))
      return i.getInt();
    if (value)
      wrongKind(name, "an integer");
    return otherwise;
  }
  double getFloat(StringRef name, double otherwise = 0.0) {
    Attribute value = get(name);
    if (auto f = dyn_cast_or_null<FloatAttr>(value))
      return f.getValueAsDouble();
    if (auto i = dyn_cast_or_null<IntegerAttr>(value))
      return double(i.getInt());
    if (value)
      wrongKind(name, "a number");
    return otherwise;
  }
  bool getBool(StringRef name, bool otherwise = false) {
    Attribute value = get(name);
    if (auto b = dyn_cast_or_null<BoolAttr>(value))
      return b.getValue();
    if (value)
      wrongKind(name, "a boolean");
    return otherwise;
  }
  std::string getString(StringRef name) {
    Attribute value = get(name);
    if (auto s = dyn_cast_or_null<StringAttr>(value))
      return s.str();
    if (value)
      wrongKind(name, "a string");
    return "";
  }
  ArrayRef<double> getFloats(StringRef name) {
    Attribute value = get(name);
    if (auto array = dyn_cast_or_null<DenseF64ArrayAttr>(value))
      return array.asArrayRef();
    if (value)
      wrongKind(name, "an array of f64");
    return ArrayRef<double>();
  }

private:
  Attribute get(StringRef name) const {
    return dict ? dict.get(name) : Attribute();
  }
  void wrongKind(StringRef name, StringRef expected) {
    op->emitError("internal error: setting '")
        << path << name << "' is not " << expected;
    hasError = true;
  }

  DictionaryAttr dict;
  Operation *op;
  std::string path;
  bool hasError = false;
};

flatbuffers::Offset<fb::Optimizer>
writeOptimizer(flatbuffers::FlatBufferBuilder &fbb, Settings &settings) {
  namespace opt = optimizers;
  auto kind = fbb.CreateString(settings.getString("kind"));
  // Sema writes `betas` as one list; the manifest has beta1 and beta2. A
  // hyper the kind does not take has its default (schema/Optimizers.def).
  opt::Hypers hypers;
  ArrayRef<double> betas = settings.getFloats("betas");
  if (betas.size() == 2) {
    hypers.beta1 = betas[0];
    hypers.beta2 = betas[1];
  }
  fb::OptimizerBuilder optimizer(fbb);
  optimizer.add_kind(kind);
#define MODELC_OPTIMIZER_HYPER(KEY, ...)                                       \
  optimizer.add_##KEY(settings.getFloat(#KEY, hypers.KEY));
#define MODELC_OPTIMIZER_FLAG(KEY)                                             \
  optimizer.add_##KEY(settings.getBool(#KEY, false));
#include "schema/Optimizers.def"
  return optimizer.Finish();
}

flatbuffers::Offset<fb::Schedule>
writeSchedule(flatbuffers::FlatBufferBuilder &fbb, Settings &settings) {
  auto kind = fbb.CreateString(settings.has("kind") ? settings.getString("kind")
                                                    : "constant");
  fb::ScheduleBuilder schedule(fbb);
  schedule.add_kind(kind);
  schedule.add_warmup(settings.getInt("warmup"));
  schedule.add_min_lr(settings.getFloat("min_lr"));
  schedule.add_every(settings.getInt("every"));
  schedule.add_gamma(settings.getFloat("gamma", 1.0));
  return schedule.Finish();
}

flatbuffers::Offset<fb::GradScaler>
writeGradScaler(flatbuffers::FlatBufferBuilder &fbb, Settings &settings) {
  fb::GradScalerBuilder scaler(fbb);
  scaler.add_init_scale(settings.getFloat("init_scale"));
  scaler.add_growth_factor(settings.getFloat("growth_factor"));
  scaler.add_backoff_factor(settings.getFloat("backoff_factor"));
  scaler.add_growth_interval(settings.getInt("growth_interval"));
  return scaler.Finish();
}

FailureOr<flatbuffers::Offset<fb::TrainEntry>>
writeTrainEntry(flatbuffers::FlatBufferBuilder &fbb, mdl::TrainOp train,
                const UserNames &names) {
  Settings settings(train.getSettings(), train, "");
  Settings eval = settings.sub("eval"), checkpoint = settings.sub("checkpoint"),
           log = settings.sub("log");
  auto name = fbb.CreateString(names(train.getSymName()).str());
  auto data = fbb.CreateString(names(train.getData()).str());
  auto precision = fbb.CreateString(settings.getString("precision"));
  auto evalData = fbb.CreateString(names(eval.getString("data")).str());
  auto checkpointDir = fbb.CreateString(checkpoint.getString("dir"));
  std::vector<std::string> outputNames;
  for (Attribute output : train.getOutputs())
    outputNames.push_back(cast<StringAttr>(output).str());
  auto outputs = fbb.CreateVectorOfStrings(outputNames);
  Settings optimizerSettings = settings.sub("optimizer"),
           scheduleSettings = settings.sub("schedule");
  auto optimizer = writeOptimizer(fbb, optimizerSettings);
  auto schedule = writeSchedule(fbb, scheduleSettings);
  Settings scalerSettings = settings.sub("grad_scaler");
  flatbuffers::Offset<fb::GradScaler> scaler;
  if (settings.has("grad_scaler"))
    scaler = writeGradScaler(fbb, scalerSettings);
  else if (settings.getString("precision") == "f16")
    return train.emitError("precision f16 needs the 'grad_scaler' settings "
                           "(init_scale, growth_factor, backoff_factor, "
                           "growth_interval)");

  // The gradient buckets of its fwd_bwd (--mdl-shard-data-parallel), and
  // under ZeRO-1 the parameters its update prepares.
  std::vector<uint64_t> bucketBytes;
  std::vector<std::string> zeroParams;
  auto module = train->getParentOfType<ModuleOp>();
  for (auto func : module.getOps<func::FuncOp>()) {
    auto entryName = func->getAttrOfType<StringAttr>("mdl.entry");
    auto kind = func->getAttrOfType<StringAttr>("mdl.function");
    auto buckets = func->getAttrOfType<ArrayAttr>("mdl.gradient_buckets");
    if (entryName && kind && buckets &&
        entryName.getValue() == train.getSymName() &&
        kind.getValue() == "fwd_bwd")
      for (Attribute bytes : buckets)
        bucketBytes.push_back(cast<IntegerAttr>(bytes).getInt());
    auto params = func->getAttrOfType<ArrayAttr>(kZeroParamsAttrName);
    if (entryName && params && entryName.getValue() == train.getSymName())
      for (Attribute param : params)
        zeroParams.push_back(cast<StringAttr>(param).str());
  }
  auto zeroParamNames = fbb.CreateVectorOfStrings(zeroParams);
  auto gradientBuckets = fbb.CreateVector(bucketBytes);
  Settings parallel = settings.sub("parallel");
  double bucketMb = parallel.getFloat("bucket_mb", 25.0);

  fb::TrainEntryBuilder entry(fbb);
  entry.add_name(name);
  entry.add_data(data);
  entry.add_batch(settings.getInt("batch"));
  entry.add_accumulate(settings.getInt("accumulate", 1));
  entry.add_epochs(settings.getInt("epochs"));
  entry.add_steps(settings.getInt("steps"));
  entry.add_seed(settings.getInt("seed"));
  entry.add_shuffle(settings.getBool("shuffle", true));
  entry.add_precision(precision);
  entry.add_optimizer(optimizer);
  entry.add_schedule(schedule);
  // grad_clip is absent when clipping is off.
  entry.add_grad_clip(settings.getFloat("grad_clip"));
  entry.add_has_grad_clip(settings.has("grad_clip"));
  entry.add_eval_data(evalData);
  entry.add_eval_every(eval.getInt("every"));
  entry.add_eval_steps(eval.getInt("steps"));
  entry.add_checkpoint_every(checkpoint.getInt("every"));
  entry.add_checkpoint_dir(checkpointDir);
  entry.add_checkpoint_keep(checkpoint.getInt("keep"));
  entry.add_log_every(log.getInt("every", 10));
  entry.add_outputs(outputs);
  if (!scaler.IsNull())
    entry.add_grad_scaler(scaler);
  entry.add_gradient_buckets(gradientBuckets);
  entry.add_bucket_mb(bucketMb);
  entry.add_zero(parallel.getInt("zero"));
  entry.add_zero_params(zeroParamNames);
  auto offset = entry.Finish();
  for (Settings *part : {&settings, &eval, &checkpoint, &log,
                         &optimizerSettings, &scheduleSettings,
                         &scalerSettings, &parallel})
    if (part->failed())
      return failure();
  return offset;
}

/// The batch size of an infer entry: the leading dimension of its inputs,
/// from the body's arguments or, once the body is gone, from its buffers.
int64_t inferBatchSize(ModuleOp module, mdl::InferOp infer) {
  Region &body = infer.getBodyRegion();
  if (!body.empty() && body.getNumArguments() > 0)
    if (auto type = dyn_cast<RankedTensorType>(body.getArgument(0).getType()))
      if (type.getRank() > 0)
        return type.getDimSize(0);
  for (auto buffer : module.getOps<mdl::BufferOp>())
    if (buffer.getEntry() == infer.getSymName() &&
        (buffer.getRole() == "input" || buffer.getRole() == "output"))
      if (auto type = dyn_cast<RankedTensorType>(buffer.getType()))
        if (type.getRank() > 0)
          return type.getDimSize(0);
  return 0;
}

std::vector<std::string> strings(ArrayAttr array) {
  std::vector<std::string> out;
  for (Attribute value : array)
    out.push_back(cast<StringAttr>(value).str());
  return out;
}

} // namespace

UserNames::UserNames(ModuleOp module) {
  for (Operation &op : module.getOps())
    if (isa<mdl::TrainOp, mdl::InferOp, mdl::DataOp>(op))
      names[SymbolTable::getSymbolName(&op).getValue()] =
          mdl::MdlDialect::getUserName(&op).str();
}

StringRef UserNames::operator()(StringRef symbol) const {
  auto it = names.find(symbol);
  return it == names.end() ? symbol : StringRef(it->second);
}

FailureOr<FlatTables<fb::TrainEntry>>
writeTrainEntries(flatbuffers::FlatBufferBuilder &fbb, ModuleOp module,
                  const UserNames &names) {
  std::vector<flatbuffers::Offset<fb::TrainEntry>> entries;
  for (auto train : module.getOps<mdl::TrainOp>()) {
    FailureOr<flatbuffers::Offset<fb::TrainEntry>> entry =
        writeTrainEntry(fbb, train, names);
    if (failed(entry))
      return failure();
    entries.push_back(*entry);
  }
  return fbb.CreateVector(entries);
}

FailureOr<FlatTables<fb::InferEntry>>
writeInferEntries(flatbuffers::FlatBufferBuilder &fbb, ModuleOp module,
                  const UserNames &names) {
  std::vector<flatbuffers::Offset<fb::InferEntry>> entries;
  for (auto infer : module.getOps<mdl::InferOp>()) {
    auto name = fbb.CreateString(names(infer.getSymName()).str());
    auto inputs = fbb.CreateVectorOfStrings(strings(infer.getInputs()));
    auto outputs = fbb.CreateVectorOfStrings(strings(infer.getOutputs()));
    std::vector<flatbuffers::Offset<fb::ValueCheck>> checks;
    Region &body = infer.getBodyRegion();
    if (!body.empty())
      for (BlockArgument arg : body.getArguments())
        appendValueChecks(fbb, findValueChecks(arg), arg.getArgNumber(),
                          checks);
    auto checkTables = fbb.CreateVector(checks);
    fb::InferEntryBuilder entry(fbb);
    entry.add_name(name);
    entry.add_batch(inferBatchSize(module, infer));
    entry.add_inputs(inputs);
    entry.add_outputs(outputs);
    entry.add_checks(checkTables);
    entries.push_back(entry.Finish());
  }
  return fbb.CreateVector(entries);
}

void appendValueChecks(flatbuffers::FlatBufferBuilder &fbb,
                       const std::vector<ValueCheck> &checks, uint32_t input,
                       std::vector<flatbuffers::Offset<fb::ValueCheck>> &out) {
  for (const ValueCheck &check : checks) {
    auto starts = fbb.CreateVector(check.starts);
    auto limits = fbb.CreateVector(check.limits);
    auto strides = fbb.CreateVector(check.strides);
    auto use = fbb.CreateString(check.use);
    fb::ValueCheckBuilder table(fbb);
    table.add_input(input);
    table.add_starts(starts);
    table.add_limits(limits);
    table.add_strides(strides);
    table.add_min(check.min);
    table.add_end(check.end);
    table.add_has_ignore(check.ignore.has_value());
    table.add_ignore(check.ignore.value_or(0));
    table.add_use(use);
    out.push_back(table.Finish());
  }
}

} // namespace modelc
