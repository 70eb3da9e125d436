// `OUT describe [--json]`: what the program was compiled from and what it
// will do, from the manifest alone (no data is opened).
#include "runtime/driver/Describe.h"

#include "runtime/driver/DescribeGpu.h"
#include "runtime/driver/Text.h"
#include "runtime/driver/Zero.h"
#include "runtime/io/Shape.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace modelc::rt {

namespace {

using Json = nlohmann::ordered_json;

// The `.mdl` spelling of an initialiser.
const char *initName(InitKind k) {
  switch (k) {
  case InitKind::Zeros:
    return "zeros";
  case InitKind::Ones:
    return "ones";
  case InitKind::Full:
    return "full";
  case InitKind::Normal:
    return "normal";
  case InitKind::Uniform:
    return "uniform";
  case InitKind::KaimingUniform:
    return "kaiming_uniform";
  case InitKind::XavierUniform:
    return "xavier_uniform";
  case InitKind::TruncatedNormal:
    return "truncated_normal";
  }
  return "?";
}

std::string initText(const ParamInfo &p) {
  std::string args;
  for (double a : p.initArgs)
    args += fmt::format("{}{}", args.empty() ? "" : ", ", a);
  return std::string(initName(p.init)) + "(" + args + ")";
}

std::string sourceText(const FieldSpec &f) {
  FieldSpec::Kind kind = f.kind == FieldSpec::Kind::Windows ? f.inner : f.kind;
  std::string src =
      kind == FieldSpec::Kind::Npz
          ? fmt::format("npz(\"{}\", \"{}\")", f.path, f.key)
          : fmt::format("{}(\"{}\")", sourceKindName(kind), f.path);
  if (f.kind != FieldSpec::Kind::Windows)
    return src;
  return f.windowStride > 0
             ? fmt::format("windows({}, stride = {})", src, f.windowStride)
             : "windows(" + src + ")";
}

/// "[0:128]" per axis (":S" for a stride), "" for a whole sample: which
/// elements of a sample a value check reads.
std::string boxText(const ValueCheck &c, const std::vector<int64_t> &shape) {
  bool whole = true;
  std::string text;
  for (size_t i = 0; i < c.starts.size(); ++i) {
    whole = whole && c.starts[i] == 0 && c.strides[i] == 1 &&
            i < shape.size() && c.limits[i] == shape[i];
    text += fmt::format("{}{}:{}{}", i ? ", " : "", c.starts[i], c.limits[i],
                        c.strides[i] == 1 ? "" : fmt::format(":{}",
                                                             c.strides[i]));
  }
  return whole ? "" : "[" + text + "] ";
}

/// "    checked: [0:128] in [0, 256) for the ids of ..." per check.
void describeChecks(const std::vector<ValueCheck> &checks, size_t input,
                    const std::vector<int64_t> &shape, std::ostream &out) {
  for (const ValueCheck &c : checks)
    if (c.input == input)
      out << fmt::format("    checked: values {}in {} for {}\n", boxText(c, shape),
                         c.rangeText(), c.use);
}

Json checksJson(const std::vector<ValueCheck> &checks, size_t input) {
  Json list = Json::array();
  for (const ValueCheck &c : checks)
    if (c.input == input)
      list.push_back({{"starts", c.starts},
                      {"limits", c.limits},
                      {"strides", c.strides},
                      {"min", c.min},
                      {"end", c.end},
                      {"ignore", c.ignore ? Json(*c.ignore) : Json()},
                      {"use", c.use}});
  return list;
}

/// `adamw(lr 0.001, betas [0.9, 0.999], eps 1e-08, weight_decay 0.01)`: the
/// kind's arguments in torch.optim's order (schema/Optimizers.def).
std::string optimizerText(const OptimizerInfo &o) {
  const optimizers::KindDef *kind = optimizers::findKind(o.kind);
  if (!kind)
    return o.kind;
  std::string args;
  for (const optimizers::ArgDef &arg : kind->args) {
    if (!arg.key)
      break;
    std::string key = arg.key;
    std::string value =
        key == "betas" ? fmt::format("[{}, {}]", o.hypers.beta1, o.hypers.beta2)
        : key == "nesterov" ? fmt::format("{}", o.nesterov)
        : key == "centered" ? fmt::format("{}", o.centered)
                            : fmt::format("{}", *o.hypers.find(key));
    args += (args.empty() ? "" : ", ") + key + " " + value;
  }
  return o.kind + "(" + args + ")";
}

std::string scheduleText(const ScheduleInfo &s) {
  if (s.kind == "warmup_cosine")
    return fmt::format("warmup_cosine(warmup {}, min_lr {})", s.warmup,
                       s.minLr);
  if (s.kind == "linear")
    return fmt::format("linear(warmup {})", s.warmup);
  if (s.kind == "step_lr")
    return fmt::format("step_lr(every {}, gamma {})", s.every, s.gamma);
  return s.kind + "()";
}

/// ZeRO-1's optimizer state held by the fullest rank on this many ranks.
constexpr int kZeroRankCounts[] = {1, 2, 4, 8};

uint64_t zeroBytesPerRank(const ZeroShards &plan) {
  std::vector<uint64_t> held = plan.bytesPerRank();
  return *std::max_element(held.begin(), held.end());
}

void describeTrain(const Manifest &m, const TrainInfo &e, std::ostream &out) {
  out << "train " << e.name << "\n";
  out << fmt::format("  data {}, batch {} x accumulate {}, {}\n", e.data,
                     e.batch, e.accumulate,
                     e.steps > 0 ? fmt::format("{} steps", e.steps)
                                 : fmt::format("{} epochs", e.epochs));
  out << fmt::format("  optimizer {}, schedule {}, grad_clip {}\n",
                     optimizerText(e.optimizer), scheduleText(e.schedule),
                     e.hasGradClip ? fmt::format("{}", e.gradClip) : "off");
  out << fmt::format("  precision {}, seed {}, shuffle {}, log every {}\n",
                     e.precision, e.seed, e.shuffle, e.logEvery);
  if (!e.gradientBuckets.empty()) {
    std::vector<std::string> sizes;
    uint64_t total = 0;
    for (uint64_t bytes : e.gradientBuckets) {
      sizes.push_back(formatBytes(bytes));
      total += bytes;
    }
    out << fmt::format("  data parallel: {} gradient bucket{} of at most {:g} "
                       "MB ({}; {} in all), all-reduced over the ranks\n",
                       e.gradientBuckets.size(),
                       e.gradientBuckets.size() == 1 ? "" : "s", e.bucketMb,
                       fmt::join(sizes, ", "), formatBytes(total));
  }
  if (e.zero) {
    std::vector<std::string> perRank;
    uint64_t total = 0, window = 0, chunk = 0;
    for (int ranks : kZeroRankCounts)
      if (Result<ZeroShards> plan = ZeroShards::plan(m, e, ranks)) {
        perRank.push_back(fmt::format("{} on {}", formatBytes(zeroBytesPerRank(*plan)), ranks));
        total = plan->totalBytes();
        window = plan->windowBytes();
        chunk = plan->chunkElements();
      }
    out << fmt::format("  zero 1: optimizer state {} sharded over the ranks "
                       "in chunks of {} elements; per rank at most {} "
                       "ranks; a {} window in the arena\n",
                       formatBytes(total), chunk, fmt::join(perRank, ", "),
                       formatBytes(window));
  }
  if (const std::optional<GradScalerInfo> &g = e.gradScaler)
    out << fmt::format("  grad_scaler init_scale {:g}, growth_factor {:g}, "
                       "backoff_factor {:g}, growth_interval {}\n",
                       g->initScale, g->growthFactor, g->backoffFactor,
                       g->growthInterval);
  if (!e.evalData.empty())
    out << fmt::format(
        "  eval {} every {}, {}\n", e.evalData,
        e.evalEvery ? fmt::format("{} steps", e.evalEvery) : "epoch",
        e.evalSteps ? fmt::format("{} batches", e.evalSteps) : "the whole set");
  if (e.checkpointEvery > 0)
    out << fmt::format("  checkpoint every {} steps to {}, keep {}\n",
                       e.checkpointEvery, e.checkpointDir,
                       e.checkpointKeep ? std::to_string(e.checkpointKeep)
                                        : "all");
  std::string outputs;
  for (const std::string &o : e.outputs)
    outputs += (outputs.empty() ? "" : ", ") + o;
  out << "  outputs " << outputs << "\n\n";
}

void describeInfer(const Manifest &m, const InferInfo &e, std::ostream &out) {
  out << fmt::format("infer {}\n  batch {}\n", e.name, e.batch);
  auto io = [&](const char *what, Role role,
                const std::vector<std::string> &names) {
    for (size_t k = 0; k < names.size(); ++k) {
      const std::string &n = names[k];
      const BufferInfo *b = m.buffer(role, Phase::Infer, e.name, n);
      out << fmt::format("  {} {}: {}{}\n", what, n,
                         b ? dtypeName(b->dtype) : "?",
                         b ? formatShape(b->shape) : "");
      if (role == Role::Input && b && !b->shape.empty())
        describeChecks(e.checks, k,
                       std::vector<int64_t>(b->shape.begin() + 1,
                                            b->shape.end()),
                       out);
    }
  };
  io("input", Role::Input, e.inputs);
  io("output", Role::Output, e.outputs);
  out << "\n";
}

/// How `describe` names a buffer role: in text and as a JSON key.
struct RoleName {
  const char *text, *key;
};

RoleName roleName(Role role) {
  switch (role) {
  case Role::Param:
    return {"parameters", "parameters"};
  case Role::Grad:
    return {"gradients", "gradients"};
  case Role::State:
    return {"optimizer state", "optimizer_state"};
  case Role::Input:
    return {"inputs", "inputs"};
  case Role::Output:
    return {"outputs", "outputs"};
  case Role::Hyper:
    return {"hypers", "hypers"};
  case Role::Window:
    return {"ZeRO-1 windows", "zero_windows"};
  case Role::ModuleBuffer:
    return {"module buffers", "module_buffers"};
  }
  return {"other", "other"};
}

/// The named (persistent) buffers of one dtype, with their bytes by role.
struct PersistentDtype {
  DType dtype;
  uint64_t bytes = 0;
  std::vector<std::pair<RoleName, uint64_t>> byRole;
};

/// The persistent region by dtype (largest first) and role, from the
/// manifest's buffers; alignment padding is not counted.
std::vector<PersistentDtype> persistentByDtype(const Manifest &m) {
  std::vector<PersistentDtype> out;
  for (const BufferInfo &b : m.buffers) {
    auto d = std::find_if(out.begin(), out.end(),
                          [&](const PersistentDtype &p) { return p.dtype == b.dtype; });
    if (d == out.end())
      d = out.insert(out.end(), PersistentDtype{b.dtype, 0, {}});
    d->bytes += b.bytes;
    RoleName role = roleName(b.role);
    auto r = std::find_if(d->byRole.begin(), d->byRole.end(),
                          [&](const auto &e) { return e.first.key == role.key; });
    if (r == d->byRole.end())
      d->byRole.push_back({role, b.bytes});
    else
      r->second += b.bytes;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PersistentDtype &a, const PersistentDtype &b) {
                     return a.bytes > b.bytes;
                   });
  return out;
}

std::vector<std::pair<DType, uint64_t>>
sortedByBytes(std::vector<std::pair<DType, uint64_t>> v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  return v;
}

} // namespace

void describeText(const Manifest &m, std::ostream &out) {
  out << "program " << m.sourceName << "\n";
  out << "source hash " << m.sourceHash << "\n";
  std::string targets;
  for (const std::string &t : m.targets)
    targets += (targets.empty() ? "" : ", ") + t;
  out << "targets " << targets << "\n\n";
  for (const TrainInfo &e : m.train)
    describeTrain(m, e, out);
  for (const InferInfo &e : m.infer)
    describeInfer(m, e, out);
  out << "data\n";
  for (const DataSetInfo &d : m.datasets)
    for (const FieldSpec &f : d.fields) {
      out << fmt::format("  {}.{}: {}{} = {}\n", d.name, f.name,
                         dtypeName(f.dtype), formatShape(f.shape),
                         sourceText(f));
      describeChecks(f.checks, 0, f.shape, out);
    }

  size_t nameWidth = 5, shapeWidth = 5;
  for (const ParamInfo &p : m.params) {
    nameWidth = std::max(nameWidth, p.name.size());
    shapeWidth = std::max(shapeWidth, formatShape(p.shape).size());
  }
  out << fmt::format("\nparameters\n  {:<{}}  {:<5}  {:<{}}  {:>13}  init\n",
                     "name", nameWidth, "dtype", "shape", shapeWidth, "count");
  for (const ParamInfo &p : m.params)
    out << fmt::format(
        "  {:<{}}  {:<5}  {:<{}}  {:>13}  {}{}\n", p.name, nameWidth,
        dtypeName(p.dtype), formatShape(p.shape), shapeWidth,
        formatCount(int64_t(checkedElementCount(p.shape).value_or(0))),
        initText(p), p.trainable ? "" : "  (buffer)");
  out << fmt::format("  {:<{}}  {:>13}\n", "total", nameWidth + shapeWidth + 9,
                     formatCount(m.parameterCount()));
  out << fmt::format("\nmemory plan (CPU)\n  arena       {} ({} bytes)\n"
                     "  persistent  {} ({} bytes)\n",
                     formatBytes(m.arenaBytes), m.arenaBytes,
                     formatBytes(m.persistentBytes), m.persistentBytes);
  for (const PersistentDtype &d : persistentByDtype(m)) {
    std::string parts;
    for (const auto &[role, bytes] : d.byRole)
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", role.text,
                           formatBytes(bytes));
    out << fmt::format("    {:<9} {}: {}\n", dtypeName(d.dtype),
                       formatBytes(d.bytes), parts);
  }
  uint64_t transient = m.arenaBytes - m.persistentBytes;
  out << fmt::format("  transient   {} ({} bytes)\n", formatBytes(transient),
                     transient);
  if (const std::optional<ScratchPeak> &peak = m.scratchPeak) {
    out << fmt::format("    at its fullest, in {}: {} live\n", peak->function,
                       formatBytes(peak->liveBytes));
    for (const auto &[dtype, bytes] : sortedByBytes(peak->byDtype))
      out << fmt::format("    {:<9} {}\n", dtypeName(dtype), formatBytes(bytes));
  }
  describeGpuText(m, out);
}

void describeJson(const Manifest &m, std::ostream &out) {
  Json j;
  j["source_name"] = m.sourceName;
  j["source_hash"] = m.sourceHash;
  j["targets"] = m.targets;
  Json train = Json::array();
  for (const TrainInfo &e : m.train) {
    const OptimizerInfo &o = e.optimizer;
    const ScheduleInfo &s = e.schedule;
    Json t = {{"name", e.name},          {"data", e.data},
              {"batch", e.batch},        {"accumulate", e.accumulate},
              {"steps", e.steps},        {"epochs", e.epochs},
              {"seed", e.seed},          {"shuffle", e.shuffle},
              {"precision", e.precision}};
    Json optimizer = {{"kind", o.kind}};
#define MODELC_OPTIMIZER_HYPER(KEY, ...) optimizer[#KEY] = o.hypers.KEY;
#define MODELC_OPTIMIZER_FLAG(KEY) optimizer[#KEY] = o.KEY;
#include "schema/Optimizers.def"
    t["optimizer"] = std::move(optimizer);
    t["schedule"] = {{"kind", s.kind},
                     {"warmup", s.warmup},
                     {"min_lr", s.minLr},
                     {"every", s.every},
                     {"gamma", s.gamma}};
    t["grad_clip"] = e.hasGradClip ? Json(e.gradClip) : Json();
    t["gradient_buckets"] = e.gradientBuckets;
    t["bucket_mb"] = e.bucketMb;
    t["zero"] = e.zero ? 1 : 0;
    if (e.zero) {
      Json perRank = Json::object();
      for (int ranks : kZeroRankCounts)
        if (Result<ZeroShards> plan = ZeroShards::plan(m, e, ranks)) {
          perRank[std::to_string(ranks)] = zeroBytesPerRank(*plan);
          t["optimizer_state_bytes"] = plan->totalBytes();
          t["zero_chunk_elements"] = plan->chunkElements();
          t["zero_window_bytes"] = plan->windowBytes();
        }
      t["optimizer_state_bytes_per_rank"] = perRank;
    }
    if (e.gradScaler)
      t["grad_scaler"] = {{"init_scale", e.gradScaler->initScale},
                          {"growth_factor", e.gradScaler->growthFactor},
                          {"backoff_factor", e.gradScaler->backoffFactor},
                          {"growth_interval", e.gradScaler->growthInterval}};
    t["eval"] = e.evalData.empty() ? Json()
                                   : Json{{"data", e.evalData},
                                          {"every", e.evalEvery},
                                          {"steps", e.evalSteps}};
    t["checkpoint"] = e.checkpointEvery > 0 ? Json{{"every", e.checkpointEvery},
                                                   {"dir", e.checkpointDir},
                                                   {"keep", e.checkpointKeep}}
                                            : Json();
    t["log_every"] = e.logEvery;
    t["outputs"] = e.outputs;
    train.push_back(t);
  }
  j["train"] = train;
  Json infer = Json::array();
  for (const InferInfo &e : m.infer) {
    Json i = {{"name", e.name}, {"batch", e.batch}};
    for (auto [key, role, names] :
         {std::make_tuple("inputs", Role::Input, &e.inputs),
          std::make_tuple("outputs", Role::Output, &e.outputs)}) {
      Json list = Json::array();
      for (size_t k = 0; k < names->size(); ++k) {
        const std::string &n = (*names)[k];
        const BufferInfo *b = m.buffer(role, Phase::Infer, e.name, n);
        Json item = {{"name", n},
                     {"dtype", b ? dtypeName(b->dtype) : ""},
                     {"shape", b ? b->shape : std::vector<int64_t>()}};
        if (role == Role::Input)
          item["checks"] = checksJson(e.checks, k);
        list.push_back(item);
      }
      i[key] = list;
    }
    infer.push_back(i);
  }
  j["infer"] = infer;
  Json datasets = Json::array();
  for (const DataSetInfo &d : m.datasets) {
    Json fields = Json::array();
    for (const FieldSpec &f : d.fields)
      fields.push_back({{"name", f.name},
                        {"dtype", dtypeName(f.dtype)},
                        {"shape", f.shape},
                        {"source", sourceText(f)},
                        {"checks", checksJson(f.checks, 0)}});
    datasets.push_back({{"name", d.name}, {"fields", fields}});
  }
  j["datasets"] = datasets;
  Json params = Json::array();
  for (const ParamInfo &p : m.params)
    params.push_back({{"name", p.name},
                      {"dtype", dtypeName(p.dtype)},
                      {"shape", p.shape},
                      {"count", checkedElementCount(p.shape).value_or(0)},
                      {"init", initName(p.init)},
                      {"init_args", p.initArgs},
                      {"buffer", !p.trainable}});
  j["parameters"] = params;
  j["total_parameters"] = m.parameterCount();
  j["memory"] = {{"device", "cpu"},
                 {"arena_bytes", m.arenaBytes},
                 {"persistent_bytes", m.persistentBytes}};
  Json persistent = Json::object();
  for (const PersistentDtype &d : persistentByDtype(m)) {
    Json roles = Json::object();
    for (const auto &[role, bytes] : d.byRole)
      roles[role.key] = bytes;
    persistent[dtypeName(d.dtype)] = {{"bytes", d.bytes}, {"by_role", roles}};
  }
  j["memory"]["persistent_by_dtype"] = persistent;
  if (const std::optional<ScratchPeak> &peak = m.scratchPeak) {
    Json live = Json::object();
    for (const auto &[dtype, bytes] : sortedByBytes(peak->byDtype))
      live[dtypeName(dtype)] = bytes;
    j["memory"]["transient_peak"] = {{"function", peak->function},
                                     {"live_bytes", peak->liveBytes},
                                     {"by_dtype", live}};
  }
  if (m.gpuProgram())
    j["gpu"] = describeGpuJson(m);
  out << j.dump(2) << "\n";
}

} // namespace modelc::rt
