// Evaluation of a train entry: loss and metrics averaged over batches of
// the eval data in file order, without updates (spec §8 `eval`).
#pragma once

#include "runtime/dist/Communicator.h"
#include "runtime/driver/Bindings.h"
#include "runtime/driver/RunLog.h"

namespace modelc::rt {

class Evaluator {
public:
  /// The entry's Eval function on its eval data (`evalOverrides` applied).
  /// Without an Eval function (no `eval` in the entry) and with
  /// `allowFallback`, the FwdBwd function on the training data
  /// (`dataOverrides` applied) stands in: its gradients are ignored and its
  /// dropout stays active.
  static Result<Evaluator> open(const Manifest &manifest,
                                const TrainInfo &entry,
                                const std::vector<FieldPath> &evalOverrides,
                                const std::vector<FieldPath> &dataOverrides,
                                bool allowFallback);

  /// Averages of "loss" and each metric over min(steps, full batches)
  /// batches (all full batches when steps is 0). With data-parallel ranks
  /// (`comm`), rank `rank` evaluates batches rank, rank + R, ... and every
  /// rank gets the averages over all of them.
  Result<std::vector<double>> run(Arena &arena, int64_t steps, int rank = 0,
                                  dist::Communicator *comm = nullptr) const;

  int64_t batches(int64_t steps) const;
  const std::string &dataName() const { return data_.name(); }

private:
  Evaluator(BoundData data) : data_(std::move(data)) {}
  BoundData data_;
  int64_t batch_ = 0;
  modelc_fn fn_ = nullptr;
  std::vector<const BufferInfo *> outputs_;
};

/// Runs `OUT eval [NAME] --weights W`: prints (and logs) the averages.
Status runEvaluation(const Manifest &manifest, const CommandLine &cl,
                     ProgramIO &io);

} // namespace modelc::rt
