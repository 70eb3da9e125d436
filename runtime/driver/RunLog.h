// What a run prints and logs: the step lines (plain when stdout is not a
// terminal, a one-line progress bar when it is), eval lines, and the
// `--log` JSON lines.
#pragma once

#include "runtime/support/Status.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace modelc::rt {

/// Where a program writes: tests pass string streams.
struct ProgramIO {
  std::ostream &out;
  std::ostream &err;
  bool outIsTerminal = false;
};

struct StepRecord {
  int64_t step = 0;
  double loss = 0;
  std::vector<double> metrics; // in the order of the metric names
  std::optional<double> lr, gradNorm;
  /// f16: the loss scale this step's backward used, and the steps skipped
  /// so far (this one included) for an inf/NaN gradient.
  std::optional<double> lossScale;
  std::optional<int64_t> skippedSteps;
  double throughput = 0; // samples or tokens per second
};

class RunLog {
public:
  /// `names` are "loss" and then the metrics; `tokens` selects tokens_per_s
  /// over samples_per_s. An empty `path` logs nothing; `append` continues a
  /// resumed run's log.
  static Result<RunLog> open(ProgramIO &io, const std::string &path,
                             bool append, int64_t totalSteps,
                             std::vector<std::string> names, bool tokens);

  void step(const StepRecord &record);
  /// Loss and metrics averaged over an evaluation; `step` is absent for the
  /// eval command.
  void eval(std::optional<int64_t> step, const std::vector<double> &values);
  /// Ends the progress bar's line.
  void finish();
  /// Closes the --log file; a failed write or close since open is an error
  /// naming the file (the first one seen).
  Status close();
  /// The first --log write error, or ok. Once one happened nothing more is
  /// written to the file.
  const Status &fileStatus() const { return fileStatus_; }

  RunLog(RunLog &&other) noexcept;
  RunLog &operator=(RunLog &&) = delete;
  RunLog(const RunLog &) = delete;
  ~RunLog();

private:
  RunLog(ProgramIO &io) : io_(&io) {}
  void endBar();
  void writeJson(const std::string &line);

  ProgramIO *io_;
  int fd_ = -1; // the --log file, or -1
  Status fileStatus_;
  std::string path_;
  int64_t totalSteps_ = 0;
  std::vector<std::string> names_;
  bool tokens_ = false;
  bool barOpen_ = false;
};

} // namespace modelc::rt
