// The rank a thread trains as, seen by the generated code's collectives
// (modelc_all_reduce_* of ProgramABI.h, the lowering of mdlrt.all_reduce):
// the trainer of each rank installs one on its thread and says, before
// each fwd_bwd, whether the micro-batch is its step's last (the only one
// whose buckets are reduced). docs/runtime/distributed.md.
#pragma once

#include "runtime/dist/Communicator.h"

#include <vector>

namespace modelc::rt::dist {

class RankContext {
public:
  /// Installs itself as this thread's context for its lifetime; `comm` may
  /// be null (one rank: buckets change nothing).
  explicit RankContext(Communicator *comm);
  ~RankContext();
  RankContext(const RankContext &) = delete;
  RankContext &operator=(const RankContext &) = delete;

  /// This thread's context; null where none is installed (a program run
  /// outside a trainer, e.g. infer or a gradient check: one rank).
  static RankContext *current();

  /// Whether the next launches' buckets are reduced: true only around the
  /// fwd_bwd of a step's last micro-batch.
  void setReducing(bool reducing) { reducing_ = reducing; }
  bool reducing() const { return reducing_; }

  /// What a bucket's sum over the ranks is divided by: the rank count
  /// (the default), or on a run that changed its accumulation the
  /// micro-batches per step over those the program was compiled for
  /// (fwd_bwd scales each micro-batch's gradient by 1/accumulate of its
  /// entry). With one rank and a divisor of 1 nothing is done.
  void setDivisor(double divisor) { divisor_ = divisor; }
  double divisor() const { return divisor_; }

  /// The first collective error since the last call, which clears it. A
  /// collective that failed leaves its buffers as they were and later
  /// buckets are skipped, so the caller must check after each launch.
  Status takeError();

  /// The generated code's calls (ProgramABI.h).
  void add(float *data, int64_t count);
  void add(double *data, int64_t count);
  void reduceBucket(int64_t bucket);

private:
  template <typename T> struct Pending {
    std::vector<std::pair<T *, int64_t>> buffers;
    std::vector<T> staging;
  };
  template <typename T> Status reduce(Pending<T> &pending);

  Communicator *comm_;
  RankContext *previous_;
  bool reducing_ = false;
  double divisor_;
  Status error_;
  Pending<float> f32_;
  Pending<double> f64_;
};

} // namespace modelc::rt::dist
