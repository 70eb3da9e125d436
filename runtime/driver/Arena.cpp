// The arena's allocation and scalar access (see Arena.h).
#include "runtime/driver/Arena.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sys/resource.h>

namespace modelc::rt {

void Arena::Free::operator()(uint8_t *p) const { std::free(p); }

Result<Arena> Arena::allocate(uint64_t bytes) {
  uint64_t rounded = bytes < 64 ? 64 : (bytes + 63) / 64 * 64;
  if (rounded < bytes)
    return Status::error("internal error: the arena size overflows",
                         kExitInternal);
  void *p = std::aligned_alloc(64, size_t(rounded));
  if (!p) {
    struct rlimit limit;
    std::string why = "the machine's memory";
    if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      why = fmt::format("the address-space limit (ulimit -v) of {} bytes",
                        uint64_t(limit.rlim_cur));
    return Status::error(
        fmt::format("out of memory: cannot allocate the program's arena of {} "
                    "bytes within {}",
                    bytes, why),
        kExitUsage);
  }
  std::memset(p, 0, size_t(rounded));
  return Arena(static_cast<uint8_t *>(p));
}

double Arena::readElement(const BufferInfo &b, uint64_t i) const {
  if (b.dtype == DType::F64) {
    double v;
    std::memcpy(&v, at(b) + i * sizeof v, sizeof v);
    return v;
  }
  float v;
  std::memcpy(&v, at(b) + i * sizeof v, sizeof v);
  return v;
}

void Arena::writeElement(const BufferInfo &b, uint64_t i, double value) {
  if (b.dtype == DType::F64) {
    std::memcpy(at(b) + i * sizeof value, &value, sizeof value);
    return;
  }
  float v = float(value);
  std::memcpy(at(b) + i * sizeof v, &v, sizeof v);
}

namespace {

/// The phase of the buffers a function of `kind` reads and writes.
Phase phaseOf(FunctionKind kind) {
  switch (kind) {
  case FunctionKind::Eval:
    return Phase::Eval;
  case FunctionKind::Infer:
    return Phase::Infer;
  default:
    return Phase::Train;
  }
}

} // namespace

Status Arena::useDevice(std::unique_ptr<cuda::Device> device,
                        const Manifest &m) {
  functions_.clear();
  for (size_t i = 0; i < m.functions.size(); ++i) {
    const FunctionInfo &f = m.functions[i];
    DeviceFunction d{f.fn, i, {}, {}, {}};
    Phase phase = phaseOf(f.kind);
    // Of a train entry's outputs, fwd_bwd writes the loss and the metrics
    // (TrainInfo::outputs) and update the rest (lr, grad norm).
    const TrainInfo *train = nullptr;
    for (const TrainInfo &t : m.train)
      if (t.name == f.entry)
        train = &t;
    auto writes = [&](const BufferInfo &b) {
      if (f.kind == FunctionKind::UpdateChunk)
        return false;
      if (!train || phase != Phase::Train)
        return true;
      bool lossOrMetric =
          std::find(train->outputs.begin(), train->outputs.end(), b.key) !=
          train->outputs.end();
      return lossOrMetric == (f.kind == FunctionKind::FwdBwd);
    };
    for (const BufferInfo &b : m.buffers) {
      if (b.entry != f.entry || !b.bytes)
        continue;
      if (b.role == Role::Input && b.phase == phase &&
          f.kind != FunctionKind::Update &&
          f.kind != FunctionKind::UpdateChunk)
        d.inputs.push_back({b.offset, b.bytes});
      else if (b.role == Role::Hyper)
        d.hypers.push_back({b.offset, b.bytes});
      else if (b.role == Role::Output && b.phase == phase && writes(b))
        d.outputs.push_back({b.offset, b.bytes});
    }
    functions_.push_back(std::move(d));
  }
  device_ = std::move(device);
  persistentBytes_ = m.persistentBytes;
  return pushPersistent();
}

Result<Arena::DeviceFunction *> Arena::deviceFunction(modelc_fn fn) {
  auto f = std::find_if(functions_.begin(), functions_.end(),
                        [&](const DeviceFunction &d) { return d.fn == fn; });
  if (f == functions_.end())
    return Status::error("internal error: a function the manifest does not "
                         "list",
                         kExitInternal);
  return &*f;
}

Status Arena::upload(const std::vector<Range> &ranges) {
  for (const Range &r : ranges)
    MODELC_RETURN_IF_ERROR(device_->upload(r.offset, at(r.offset), r.bytes));
  return Status();
}

Status Arena::call(modelc_fn fn) {
  MODELC_RETURN_IF_ERROR(launch(fn));
  return finish(fn);
}

Status Arena::launch(modelc_fn fn) {
  if (!device_) {
    fn(data_.get());
    return Status();
  }
  Result<DeviceFunction *> f = deviceFunction(fn);
  if (!f)
    return f.status();
  if (!(*f)->staged)
    MODELC_RETURN_IF_ERROR(upload((*f)->inputs));
  (*f)->staged = false;
  MODELC_RETURN_IF_ERROR(upload((*f)->hypers));
  return device_->run((*f)->index);
}

Status Arena::stageInputs(modelc_fn fn) {
  if (!device_)
    return Status();
  Result<DeviceFunction *> f = deviceFunction(fn);
  if (!f)
    return f.status();
  MODELC_RETURN_IF_ERROR(upload((*f)->inputs));
  (*f)->staged = true;
  return Status();
}

Status Arena::finish(modelc_fn fn) {
  if (!device_)
    return Status();
  Result<DeviceFunction *> f = deviceFunction(fn);
  if (!f)
    return f.status();
  for (const Range &r : (*f)->outputs)
    MODELC_RETURN_IF_ERROR(device_->download(r.offset, at(r.offset), r.bytes));
  return Status();
}

Status Arena::pushPersistent() {
  if (!device_ || !persistentBytes_)
    return Status();
  return device_->upload(0, data_.get(), persistentBytes_);
}

Status Arena::pullPersistent() {
  if (!device_ || !persistentBytes_)
    return Status();
  return device_->download(0, data_.get(), persistentBytes_);
}

} // namespace modelc::rt
