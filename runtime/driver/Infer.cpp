// `OUT infer [NAME] --weights W --input X=PATH ... --output PATH`: checks
// the inputs against the entry's Input buffers, runs the entry batch by
// batch with zero padding, and writes the outputs without the padding.
#include "runtime/driver/Infer.h"

#include "runtime/driver/Devices.h"

#include "runtime/driver/Arena.h"
#include "runtime/driver/Weights.h"
#include "runtime/io/Files.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace modelc::rt {

namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// PATH.npy, PATH.npz:KEY, or PATH.npz (member NAME).
Result<NpyArray> readInput(const FieldPath &in) {
  size_t colon = in.path.rfind(".npz:");
  if (colon != std::string::npos)
    return readNpzMember(in.path.substr(0, colon + 4),
                         in.path.substr(colon + 5));
  if (endsWith(in.path, ".npz"))
    return readNpzMember(in.path, in.field);
  if (endsWith(in.path, ".npy"))
    return readNpy(in.path);
  return Status::error(fmt::format(
      "--input {}={}: expected a .npy file, FILE.npz or FILE.npz:KEY", in.field,
      in.path));
}

// The Input or Output buffers `names` of an infer entry; each must have the
// batch as its first dimension.
Result<std::vector<const BufferInfo *>>
batchBuffers(const Manifest &m, const InferInfo &e, Role role,
             const std::vector<std::string> &names) {
  std::vector<const BufferInfo *> out;
  for (const std::string &name : names) {
    const BufferInfo *b = m.buffer(role, Phase::Infer, e.name, name);
    if (!b || b->shape.empty() || b->shape[0] != e.batch)
      return Status::error(fmt::format("internal error: infer entry '{}' has "
                                       "no batched {} buffer '{}'",
                                       e.name, roleName(role), name),
                           kExitInternal);
    out.push_back(b);
  }
  return out;
}

// Reads every declared input once; rows must agree across inputs.
Result<std::vector<NpyArray>>
readInputs(const InferInfo &e, const std::vector<const BufferInfo *> &buffers,
           const std::vector<FieldPath> &given, int64_t &rows) {
  std::vector<NpyArray> arrays(e.inputs.size());
  std::vector<bool> seen(e.inputs.size(), false);
  std::string names;
  for (const std::string &n : e.inputs)
    names += (names.empty() ? "" : ", ") + n;
  for (const FieldPath &in : given) {
    size_t i = std::find(e.inputs.begin(), e.inputs.end(), in.field) -
               e.inputs.begin();
    if (i == e.inputs.size())
      return Status::error(fmt::format("--input {}: infer entry '{}' has no "
                                       "input '{}'; its inputs are: {}",
                                       in.field, e.name, in.field, names));
    if (seen[i])
      return Status::error("--input " + in.field + ": given twice");
    seen[i] = true;
    Result<NpyArray> a = readInput(in);
    if (!a)
      return a.status();
    const BufferInfo &b = *buffers[i];
    std::vector<int64_t> row(b.shape.begin() + 1, b.shape.end());
    if (a->dtype != b.dtype || a->shape.empty() ||
        std::vector<int64_t>(a->shape.begin() + 1, a->shape.end()) != row)
      return Status::error(
          fmt::format("--input {}={}: expected {}[rows{}, found {}{}", in.field,
                      in.path, dtypeName(b.dtype),
                      row.empty() ? "]" : ", " + formatShape(row).substr(1),
                      dtypeName(a->dtype), formatShape(a->shape)));
    for (const ValueCheck &check : e.checks) {
      if (check.input != i)
        continue;
      int64_t rowElements = int64_t(checkedElementCount(row).value_or(0));
      size_t rowBytes = size_t(rowElements) * dtypeSize(b.dtype);
      for (int64_t r = 0; r < a->shape[0]; ++r) {
        std::optional<BadValue> bad = findBadValue(
            check, b.dtype, row, a->bytes.data() + size_t(r) * rowBytes);
        if (bad)
          return Status::error(
              fmt::format("--input {}={}: {}", in.field, in.path,
                          badValueText(check, *bad, row, r * rowElements,
                                       fmt::format("row {}", r), "")));
      }
    }
    arrays[i] = a.take();
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (!seen[i])
      return Status::error(fmt::format("infer entry '{}' needs --input {}=PATH "
                                       "(its inputs are: {})",
                                       e.name, e.inputs[i], names));
  rows = arrays.empty() ? 0 : arrays[0].shape[0];
  for (size_t i = 1; i < arrays.size(); ++i)
    if (arrays[i].shape[0] != rows)
      return Status::error(fmt::format("--input: {} has {} rows but {} has {}",
                                       e.inputs[0], rows, e.inputs[i],
                                       arrays[i].shape[0]));
  return arrays;
}

// numpy has no bfloat16: its bits are the high half of an f32's, so f32
// holds every bf16 value exactly.
std::vector<uint8_t> bf16AsF32(const std::vector<uint8_t> &bf16) {
  std::vector<uint8_t> f32(bf16.size() * 2, 0);
  for (size_t i = 0; i < bf16.size() / 2; ++i) {
    f32[4 * i + 2] = bf16[2 * i];
    f32[4 * i + 3] = bf16[2 * i + 1];
  }
  return f32;
}

// Outputs keep their dtype, except bf16, which is written as f32.
Status writeOutputs(const std::string &path, const InferInfo &e,
                    const std::vector<const BufferInfo *> &buffers,
                    std::vector<std::vector<uint8_t>> &data, int64_t rows) {
  std::vector<std::pair<std::string, NpyArrayView>> views;
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::vector<int64_t> shape = buffers[i]->shape;
    shape[0] = rows;
    DType dtype = buffers[i]->dtype;
    if (dtype == DType::BF16) {
      data[i] = bf16AsF32(data[i]);
      dtype = DType::F32;
    }
    views.push_back({e.outputs[i], {dtype, shape, data[i].data()}});
  }
  if (endsWith(path, ".npz"))
    return writeNpz(path, views);
  return writeNpy(path, views[0].second.dtype, views[0].second.shape,
                  views[0].second.data);
}

} // namespace

Status runInference(const Manifest &m, const CommandLine &cl, ProgramIO &io) {
  Result<const InferInfo *> entry = m.inferEntry(cl.entry);
  if (!entry)
    return entry.status();
  const InferInfo &e = **entry;
  modelc_fn fn = m.function(FunctionKind::Infer, e.name);
  if (!fn)
    return Status::error("internal error: infer entry '" + e.name +
                             "' has no function",
                         kExitInternal);
  if (endsWith(cl.output, ".npy")) {
    if (e.outputs.size() != 1)
      return Status::error(fmt::format(
          "--output {}: infer entry '{}' has {} outputs; write them to a .npz",
          cl.output, e.name, e.outputs.size()));
  } else if (!endsWith(cl.output, ".npz")) {
    return Status::error("--output " + cl.output +
                         ": expected a .npy or .npz path");
  }
  Result<std::vector<const BufferInfo *>> inputs =
      batchBuffers(m, e, Role::Input, e.inputs);
  Result<std::vector<const BufferInfo *>> outputs =
      batchBuffers(m, e, Role::Output, e.outputs);
  if (!inputs || !outputs)
    return !inputs ? inputs.status() : outputs.status();
  // Before any work: the output can be written where it was asked for.
  MODELC_RETURN_IF_ERROR(checkWritable(cl.output, "--output"));
  int64_t rows = 0;
  Result<std::vector<NpyArray>> arrays =
      readInputs(e, *inputs, cl.inputs, rows);
  if (!arrays)
    return arrays.status();

  Result<DeviceChoice> device = chooseDevice(cl, m);
  if (!device)
    return device.status();
  Result<Arena> arena = Arena::allocate(m.arenaBytes);
  if (!arena)
    return arena.status();
  MODELC_RETURN_IF_ERROR(loadWeights(cl.weights, m, *arena));
  MODELC_RETURN_IF_ERROR(useDevice(*device, m, *arena, io));

  std::vector<std::vector<uint8_t>> results;
  for (const BufferInfo *b : *outputs)
    results.emplace_back(size_t(b->bytes / uint64_t(e.batch) * uint64_t(rows)));
  for (int64_t start = 0; start < rows; start += e.batch) {
    int64_t n = std::min(e.batch, rows - start);
    for (size_t i = 0; i < inputs->size(); ++i) {
      const BufferInfo &b = *(*inputs)[i];
      size_t rowBytes = size_t(b.bytes / uint64_t(e.batch));
      std::memset(arena->at(b), 0, size_t(b.bytes));
      std::memcpy(arena->at(b), (*arrays)[i].bytes.data() + start * rowBytes,
                  size_t(n) * rowBytes);
    }
    MODELC_RETURN_IF_ERROR(arena->call(fn));
    for (size_t i = 0; i < outputs->size(); ++i) {
      const BufferInfo &b = *(*outputs)[i];
      size_t rowBytes = size_t(b.bytes / uint64_t(e.batch));
      std::memcpy(results[i].data() + start * rowBytes, arena->at(b),
                  size_t(n) * rowBytes);
    }
  }
  MODELC_RETURN_IF_ERROR(writeOutputs(cl.output, e, *outputs, results, rows));
  io.err << fmt::format("infer {}: {}, {} rows in {} batches of {} -> {}\n",
                        e.name, deviceText(*arena), rows,
                        (rows + e.batch - 1) / e.batch, e.batch, cl.output);
  return Status();
}

} // namespace modelc::rt
