// The program's manifest (schema/manifest.fbs) as plain values: verified,
// checked against the arena and the function table, and copied once, so that
// the rest of the driver never reads a flatbuffer or trusts an offset.
#pragma once

#include "manifest_generated.h"
#include "runtime/data/Source.h"
#include "runtime/io/DType.h"
#include "runtime/support/Status.h"
#include "schema/Optimizers.h"

#include <modelc/ProgramABI.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace modelc::rt {

using Role = modelc::manifest::Role;
using Phase = modelc::manifest::Phase;
using InitKind = modelc::manifest::InitKind;
using FunctionKind = modelc::manifest::FunctionKind;

/// A named tensor of the arena; `offset + bytes <= arena_bytes` is checked.
struct BufferInfo {
  std::string name;
  Role role;
  Phase phase;
  std::string entry;
  std::string key;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

struct ParamInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  InitKind init;
  std::vector<double> initArgs;
  size_t buffer;                    // index into Manifest::buffers
  std::optional<size_t> gradBuffer; // its Grad buffer, when it has one
  /// False for a module buffer (running statistics): saved and loaded with
  /// the parameters, never given a gradient or updated by the optimizer.
  bool trainable = true;
};

struct DataSetInfo {
  std::string name;
  std::vector<FieldSpec> fields;
};

struct FunctionInfo {
  std::string symbol;
  FunctionKind kind;
  std::string entry;
  modelc_fn fn;
  /// UpdateChunk: its window (Role::Window buffers: the parameter's chunk,
  /// the gradient's, then one per state kind), as buffer indices.
  std::vector<size_t> window;
};

/// A train entry's optimizer: its kind, hyperparameters and flags, as
/// schema/Optimizers.def defines them.
struct OptimizerInfo {
  std::string kind;
  optimizers::Hypers hypers;
#define MODELC_OPTIMIZER_FLAG(KEY) bool KEY = false;
#include "schema/Optimizers.def"
};

struct ScheduleInfo {
  std::string kind;
  int64_t warmup = 0;
  double minLr = 0;
  int64_t every = 0;
  double gamma = 0;
};

/// torch.amp.GradScaler's settings: an f16 entry's `grad_scaler { }`.
struct GradScalerInfo {
  double initScale = 65536, growthFactor = 2, backoffFactor = 0.5;
  int64_t growthInterval = 2000;
};

struct TrainInfo {
  std::string name, data;
  int64_t batch = 0, accumulate = 1, epochs = 0, steps = 0, seed = 0;
  bool shuffle = true;
  std::string precision;
  OptimizerInfo optimizer;
  ScheduleInfo schedule;
  double gradClip = 0;
  bool hasGradClip = false;
  std::string evalData;
  int64_t evalEvery = 0, evalSteps = 0;
  int64_t checkpointEvery = 0;
  std::string checkpointDir;
  int64_t checkpointKeep = 0;
  int64_t logEvery = 10;
  std::vector<std::string> outputs; // "loss", then the metrics
  /// Present exactly when the precision is f16 (dynamic loss scaling).
  std::optional<GradScalerInfo> gradScaler;
  /// The bytes of each gradient all-reduce bucket, in issue order, and the
  /// `parallel { bucket_mb }` that cut them (0 in older programs).
  std::vector<uint64_t> gradientBuckets;
  double bucketMb = 0;
  /// `parallel { zero }`: ZeRO-1 (docs/runtime/zero.md) when true, with
  /// the parameters its update prepares, in order.
  bool zero = false;
  std::vector<std::string> zeroParams;
};

struct InferInfo {
  std::string name;
  int64_t batch = 0;
  std::vector<std::string> inputs, outputs;
  std::vector<ValueCheck> checks; // on the inputs' values (check.input)
};

/// What fills the scratch region at its fullest: the temporaries live
/// together in `function` where the most bytes are, summed per dtype.
struct ScratchPeak {
  std::string function;
  uint64_t liveBytes = 0;
  std::vector<std::pair<DType, uint64_t>> byDtype;
};

struct Manifest {
  uint32_t version = 0;
  std::string sourceName, sourceHash;
  std::vector<std::string> targets;
  uint64_t arenaBytes = 0, persistentBytes = 0;
  std::optional<ScratchPeak> scratchPeak; // absent in older programs
  std::vector<TrainInfo> train;
  std::vector<InferInfo> infer;
  std::vector<ParamInfo> params;
  std::vector<DataSetInfo> datasets;
  std::vector<BufferInfo> buffers;
  std::vector<FunctionInfo> functions;
  /// The verified flatbuffer itself (8-byte aligned), for the parts that
  /// stay in flatbuffer form: the GPU section (runtime/cuda/ checks it).
  std::shared_ptr<const std::vector<uint64_t>> flatbuffer;
  /// The CPU kernels (ProgramABI.h's modelc_cpu_kernels), for kernelcheck.
  const modelc_kernel_fn *cpuKernels = nullptr;
  size_t numCpuKernels = 0;

  /// The cuda target's section, or null when the program has none.
  const modelc::manifest::GpuProgram *gpuProgram() const;

  /// Verifies and copies a manifest; any inconsistency is an internal error
  /// (exit 1), since modelc wrote it.
  static Result<Manifest> load(const uint8_t *data, size_t size,
                               const modelc_fn *table, size_t tableSize);

  /// The entry called `name`, or the first one when `name` is empty; a
  /// usage error lists the entries otherwise.
  Result<const TrainInfo *> trainEntry(const std::string &name) const;
  Result<const InferInfo *> inferEntry(const std::string &name) const;
  const DataSetInfo *dataSet(const std::string &name) const;
  const BufferInfo *buffer(Role role, Phase phase, const std::string &entry,
                           const std::string &key) const;
  std::vector<const BufferInfo *> buffersOf(Role role, Phase phase,
                                            const std::string &entry) const;
  /// Null when the program has no such function.
  modelc_fn function(FunctionKind kind, const std::string &entry) const;
  bool hasTarget(const std::string &target) const;
  const BufferInfo &paramBuffer(const ParamInfo &param) const {
    return buffers[param.buffer];
  }
  /// Null when the loss of no train entry depends on the parameter.
  const BufferInfo *gradBuffer(const ParamInfo &param) const {
    return param.gradBuffer ? &buffers[*param.gradBuffer] : nullptr;
  }
  int64_t parameterCount() const;
};

/// "Param", "Input", ... for messages.
const char *roleName(Role role);

} // namespace modelc::rt
