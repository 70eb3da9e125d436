#include "runtime/dist/RankContext.h"

#include "modelc/ProgramABI.h"

#include <fmt/format.h>

#include <cstring>

namespace modelc::rt::dist {

namespace {
thread_local RankContext *currentContext = nullptr;
} // namespace

RankContext::RankContext(Communicator *comm)
    : comm_(comm), previous_(currentContext),
      divisor_(comm ? double(comm->size()) : 1.0) {
  currentContext = this;
}

RankContext::~RankContext() { currentContext = previous_; }

RankContext *RankContext::current() { return currentContext; }

Status RankContext::takeError() {
  Status error = std::move(error_);
  error_ = Status();
  return error;
}

void RankContext::add(float *data, int64_t count) {
  f32_.buffers.emplace_back(data, count);
}

void RankContext::add(double *data, int64_t count) {
  f64_.buffers.emplace_back(data, count);
}

template <typename T> Status RankContext::reduce(Pending<T> &pending) {
  if (pending.buffers.empty())
    return Status();
  // The bucket's buffers packed into one run, reduced by one collective,
  // averaged and unpacked: every rank gets the same bits.
  size_t total = 0;
  for (auto &[data, count] : pending.buffers)
    total += size_t(count);
  pending.staging.resize(total);
  T *packed = pending.staging.data();
  for (auto &[data, count] : pending.buffers) {
    std::memcpy(packed, data, size_t(count) * sizeof(T));
    packed += count;
  }
  if (comm_ && comm_->size() > 1)
    MODELC_RETURN_IF_ERROR(
        comm_->allReduceSum(pending.staging.data(), total));
  T divisor = T(divisor_);
  const T *mean = pending.staging.data();
  for (auto &[data, count] : pending.buffers)
    for (int64_t i = 0; i < count; ++i)
      data[i] = *mean++ / divisor;
  return Status();
}

void RankContext::reduceBucket(int64_t bucket) {
  bool several = comm_ && comm_->size() > 1;
  if (reducing_ && (several || divisor_ != 1) && error_.ok()) {
    Status done = reduce(f32_);
    if (done.ok())
      done = reduce(f64_);
    if (!done.ok())
      error_ = Status::error(fmt::format("the all-reduce of gradient bucket "
                                         "{} failed: {}",
                                         bucket, done.message()),
                             done.exitCode());
  }
  f32_.buffers.clear();
  f64_.buffers.clear();
}

} // namespace modelc::rt::dist

using modelc::rt::dist::RankContext;

extern "C" void modelc_all_reduce_add_f32(float *data, int64_t count) {
  if (RankContext *context = RankContext::current())
    context->add(data, count);
}

extern "C" void modelc_all_reduce_add_f64(double *data, int64_t count) {
  if (RankContext *context = RankContext::current())
    context->add(data, count);
}

extern "C" void modelc_all_reduce_bucket(int64_t bucket) {
  if (RankContext *context = RankContext::current())
    context->reduceBucket(bucket);
}
