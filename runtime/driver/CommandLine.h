// The command line of every generated program (spec §10): commands train
// (the default), eval, infer and describe, and the developer command
// gradcheck, parsed with CLI11 into one struct.
#pragma once

#include "runtime/dist/Launch.h"
#include "runtime/support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace modelc::rt {

enum class Command { Train, Eval, Infer, Describe, Gradcheck, Kernelcheck, Help };

/// `--data FIELD=PATH`, `--eval-data FIELD=PATH`, `--input NAME=PATH`.
struct FieldPath {
  std::string field;
  std::string path;
};

struct CommandLine {
  Command command = Command::Train;
  std::string entry; // the optional NAME after the command
  bool cpu = false;
  std::optional<std::string> gpus;
  int64_t ranks = 1;
  /// train: --nnodes, --node-rank, --master, --ranks-per-node (a run of
  /// several processes; runtime/dist/Launch.h resolves them with a
  /// launcher's variables).
  dist::LaunchFlags launch;
  std::vector<FieldPath> data, evalData, inputs;
  std::optional<int64_t> steps, epochs;
  std::vector<std::string> sets; // "KEY=VALUE", in order
  std::optional<uint64_t> seed;
  std::string init, save, log, weights, output;
  std::string checkpointDir;
  std::optional<int64_t> checkpointEvery;
  bool resume = false;
  std::string resumeDir; // empty: the configured checkpoint directory
  /// Remove another run's checkpoints from the checkpoint directory instead
  /// of refusing to start.
  bool overwriteCheckpoints = false;
  /// --allow-batch-change: resuming on a rank count that cannot keep the
  /// checkpoint's global batch goes on with another one instead of
  /// refusing (docs/runtime/distributed.md).
  bool allowBatchChange = false;
  /// --time-limit: stop after the step under way once this many seconds
  /// have passed since the start, checkpoint, exit 0.
  std::optional<double> timeLimitSeconds;
  std::string timeLimitText; // as given, for messages
  /// --timeout: how long data-parallel ranks wait for each other (the
  /// rendezvous, each collective) before failing.
  double timeoutSeconds = 300;
  std::string timeoutText;
  /// --log-errors=warn: a --log that cannot be written is a warning, not an
  /// error that stops the run.
  bool logErrorsWarn = false;
  bool json = false;     // describe --json
  std::string help;      // Command::Help: the text to print
  // gradcheck: the relative step h, the tolerance on the norm-wise relative
  // error, and the most elements checked per parameter.
  double stepSize = 1e-6, tolerance = 1e-6;
  int64_t maxElements = 64;
  // kernelcheck: an element passes when |gpu - cpu| <= atol + rtol *
  // max(|gpu|, |cpu|).
  double rtol = 1e-4, atol = 1e-5;
};

/// Seconds in a duration such as "90m", "1h30m", "45s", "2h" or "3600"
/// (seconds); nullopt when it is not one or is not positive.
std::optional<double> parseDuration(const std::string &text);

/// Parses `args` (without the program name). `--help` anywhere gives
/// Command::Help with the text; any mistake is a usage error (exit 2) with
/// one message.
Result<CommandLine> parseCommandLine(const std::string &programName,
                                     std::vector<std::string> args);

} // namespace modelc::rt
