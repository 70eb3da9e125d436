// CLI11 definitions of the program's commands and options (spec §10 and the
// developer command gradcheck, docs/runtime/cli.md); this file only parses,
// the driver checks meaning.
#include "runtime/driver/CommandLine.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace modelc::rt {

namespace {

const char *const kCommands[] = {"train",    "eval",      "infer",
                                 "describe", "gradcheck", "kernelcheck"};

/// A number of at least 0, or (`positive`) above it. CLI11's own
/// PositiveNumber and NonNegativeNumber print their range in full, a
/// 309-digit double; this names what is wanted. Text that is no number is
/// left to the option's conversion, which says so.
CLI::Validator atLeastZero(bool positive) {
  return CLI::Validator(
      [positive](std::string &text) -> std::string {
        char *end = nullptr;
        double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0')
          return "";
        if (positive ? value > 0 : value >= 0)
          return "";
        return std::string(positive ? "must be positive" : "must not be "
                                                           "negative") +
               ", not " + text;
      },
      positive ? "POSITIVE" : "NONNEGATIVE");
}
const CLI::Validator kPositive = atLeastZero(true);
const CLI::Validator kNonNegative = atLeastZero(false);

void addDeviceOptions(CLI::App &cmd, CommandLine &cl) {
  cmd.add_flag("--cpu", cl.cpu, "Run on the CPU (the default of this build)");
  cmd.add_option("--gpus", cl.gpus,
                 "GPUs to use: N, a list such as 0,2,3, or all");
  cmd.add_option("--ranks", cl.ranks,
                 "Data-parallel CPU ranks (train; default 1)")
      ->check(kPositive);
}

CLI::Option *addListOption(CLI::App &cmd, const std::string &name,
                           std::vector<std::string> &into,
                           const std::string &what) {
  return cmd.add_option(name, into, what)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

Result<std::vector<FieldPath>> fieldPaths(const std::string &flag,
                                          const std::vector<std::string> &raw) {
  std::vector<FieldPath> out;
  for (const std::string &s : raw) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      return Status::error(flag + " '" + s + "': expected NAME=PATH");
    out.push_back({s.substr(0, eq), s.substr(eq + 1)});
  }
  return out;
}

struct RawLists {
  std::vector<std::string> data, evalData, inputs;
};

void defineTrain(CLI::App &app, CommandLine &cl, RawLists &raw,
                 std::string &logErrors) {
  CLI::App *t = app.add_subcommand("train", "Train (the default command)");
  t->add_option("name", cl.entry, "The train entry (default: the first)");
  addDeviceOptions(*t, cl);
  addListOption(*t, "--data", raw.data, "FIELD=PATH: replace a data source");
  addListOption(*t, "--eval-data", raw.evalData,
                "FIELD=PATH: replace an eval data source");
  t->add_option("--steps", cl.steps, "Optimizer steps to run")
      ->check(kPositive);
  t->add_option("--epochs", cl.epochs, "Epochs to run")
      ->check(kPositive);
  addListOption(*t, "--set", cl.sets, "KEY=VALUE: override a setting");
  t->add_option("--seed", cl.seed, "Same as --set seed=N")
      ->check(CLI::Range(uint64_t(0), uint64_t(1) << 53));
  t->add_option("--init", cl.init, "Start from these parameters (safetensors)");
  t->add_option("--save", cl.save, "Write the final parameters (safetensors)");
  t->add_option("--log", cl.log, "Write one JSON object per logged step");
  t->add_option("--checkpoint-dir", cl.checkpointDir,
                "Write checkpoints into this directory");
  t->add_option("--checkpoint-every", cl.checkpointEvery,
                "Write a checkpoint every N steps")
      ->check(kNonNegative);
  t->add_option("--resume", cl.resumeDir,
                "Continue from the newest checkpoint in D (default: the "
                "checkpoint directory); none there yet starts from step 0")
      ->expected(0, 1);
  t->add_flag("--overwrite-checkpoints", cl.overwriteCheckpoints,
              "Remove another run's checkpoints from the checkpoint "
              "directory instead of refusing to start");
  t->add_flag("--allow-batch-change", cl.allowBatchChange,
              "With --resume on a rank count that cannot keep the "
              "checkpoint's global batch, go on with the nearest one");
  t->add_option("--time-limit", cl.timeLimitText,
                "Stop after the step under way once DURATION (90m, 1h30m, "
                "45s) has passed, checkpoint and exit 0");
  t->add_option("--nnodes", cl.launch.nnodes,
                "Processes (nodes) of a distributed run (default 1, or the "
                "launcher's WORLD_SIZE)")
      ->check(kPositive);
  t->add_option("--node-rank", cl.launch.nodeRank,
                "This process's place among them, from 0")
      ->check(kNonNegative);
  t->add_option("--master", cl.launch.master,
                "HOST:PORT where node 0 serves the rendezvous");
  t->add_option("--ranks-per-node", cl.launch.ranksPerNode,
                "Ranks each process runs (default: --ranks, or 1 GPU)")
      ->check(kPositive);
  t->add_option("--timeout", cl.timeoutText,
                "How long ranks wait for each other (the rendezvous, each "
                "collective) before the run fails naming the missing rank "
                "(DURATION, default 5m)");
  t->add_option("--log-errors", logErrors,
                "What a --log write error does: error (stop the run, the "
                "default) or warn")
      ->check(CLI::IsMember({"error", "warn"}));
}

void defineEval(CLI::App &app, CommandLine &cl, RawLists &raw) {
  CLI::App *e = app.add_subcommand("eval", "Loss and metrics, no updates");
  e->add_option("name", cl.entry, "The train entry (default: the first)");
  addDeviceOptions(*e, cl);
  e->add_option("--weights", cl.weights,
                "Parameters (safetensors); required when there are any");
  addListOption(*e, "--data", raw.data, "FIELD=PATH: replace a data source");
  addListOption(*e, "--eval-data", raw.evalData,
                "FIELD=PATH: replace an eval data source");
  addListOption(*e, "--set", cl.sets, "KEY=VALUE: override a setting");
  e->add_option("--seed", cl.seed, "Same as --set seed=N")
      ->check(CLI::Range(uint64_t(0), uint64_t(1) << 53));
  e->add_option("--log", cl.log, "Write the result as a JSON line");
}

void defineInfer(CLI::App &app, CommandLine &cl, RawLists &raw) {
  CLI::App *i = app.add_subcommand("infer", "Run an infer entry on files");
  i->add_option("name", cl.entry, "The infer entry (default: the first)");
  addDeviceOptions(*i, cl);
  i->add_option("--weights", cl.weights,
                "Parameters (safetensors); required when there are any");
  addListOption(*i, "--input", raw.inputs, "NAME=PATH.npy or NAME=PATH.npz:KEY")
      ->required();
  i->add_option("--output", cl.output, "PATH.npy (one output) or PATH.npz")
      ->required();
}

// A developer command: not in spec §10 (docs/runtime/cli.md, Kernelcheck).
void defineKernelcheck(CLI::App &app, CommandLine &cl) {
  CLI::App *k = app.add_subcommand(
      "kernelcheck", "(developer) Run every GPU kernel and GEMM against its "
                     "CPU counterpart");
  k->add_option("--gpus", cl.gpus, "The GPU: 1 (GPU 0) or I, (GPU I)");
  k->add_option("--seed", cl.seed, "Seed of the initialisers and inputs")
      ->check(CLI::Range(uint64_t(0), uint64_t(1) << 53));
  k->add_option("--rtol", cl.rtol, "Relative tolerance")
      ->capture_default_str()
      ->check(kNonNegative);
  k->add_option("--atol", cl.atol, "Absolute tolerance")
      ->capture_default_str()
      ->check(kNonNegative);
}

// A developer command: not in spec §10 (docs/runtime/cli.md, Gradcheck).
void defineGradcheck(CLI::App &app, CommandLine &cl, RawLists &raw) {
  CLI::App *g = app.add_subcommand(
      "gradcheck", "(developer) Compare the compiled gradients with central "
                   "finite differences");
  g->add_option("name", cl.entry, "The train entry (default: the first)");
  addListOption(*g, "--data", raw.data, "FIELD=PATH: replace a data source");
  g->add_option("--seed", cl.seed, "Seed of the initialisers and dropout")
      ->check(CLI::Range(uint64_t(0), uint64_t(1) << 53));
  g->add_option("--init", cl.init, "Check at these parameters (safetensors)");
  g->add_option("--step-size", cl.stepSize,
                "Relative step h: p +- h * max(1, |p|)")
      ->capture_default_str()
      ->check(kPositive);
  g->add_option("--tolerance", cl.tolerance,
                "Largest passing norm-wise relative error")
      ->capture_default_str()
      ->check(kNonNegative);
  g->add_option("--max-elements", cl.maxElements,
                "Elements checked per parameter (evenly spaced)")
      ->capture_default_str()
      ->check(kPositive);
}

} // namespace

std::optional<double> parseDuration(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  double total = 0;
  size_t i = 0;
  bool unitless = text.find_first_not_of("0123456789.") == std::string::npos;
  while (i < text.size()) {
    size_t end = text.find_first_not_of("0123456789.", i);
    if (end == i)
      return std::nullopt;
    std::string number = text.substr(i, end - i);
    char *stop = nullptr;
    double v = std::strtod(number.c_str(), &stop);
    if (*stop != '\0' || !std::isfinite(v))
      return std::nullopt;
    if (unitless)
      return v > 0 ? std::optional<double>(v) : std::nullopt;
    if (end == std::string::npos)
      return std::nullopt; // a number without a unit after others
    char unit = text[end];
    double scale = unit == 'h' ? 3600 : unit == 'm' ? 60 : unit == 's' ? 1 : 0;
    if (scale == 0)
      return std::nullopt;
    total += v * scale;
    i = end + 1;
  }
  if (!(total > 0) || !std::isfinite(total))
    return std::nullopt;
  return total;
}

Result<CommandLine> parseCommandLine(const std::string &programName,
                                     std::vector<std::string> args) {
  bool help = !args.empty() && (args[0] == "-h" || args[0] == "--help");
  bool named = !args.empty() &&
               std::find(std::begin(kCommands), std::end(kCommands), args[0]) !=
                   std::end(kCommands);
  if (!help && !named)
    args.insert(args.begin(), "train");

  CommandLine cl;
  RawLists raw;
  CLI::App app("A program made by modelc: train, evaluate, infer.",
               programName);
  app.require_subcommand(1);
  std::string logErrors = "error";
  defineTrain(app, cl, raw, logErrors);
  defineEval(app, cl, raw);
  defineInfer(app, cl, raw);
  CLI::App *d = app.add_subcommand("describe", "Entries, parameters, memory");
  d->add_flag("--json", cl.json, "Print JSON");
  defineGradcheck(app, cl, raw);
  defineKernelcheck(app, cl);

  // CLI11 parses the arguments in reverse order.
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp &) {
    cl.command = Command::Help;
    cl.help = app.help();
    return cl;
  } catch (const CLI::ParseError &e) {
    return Status::error(e.what());
  }

  const std::string name = app.get_subcommands().front()->get_name();
  cl.command = name == "train"         ? Command::Train
               : name == "eval"        ? Command::Eval
               : name == "infer"       ? Command::Infer
               : name == "gradcheck"   ? Command::Gradcheck
               : name == "kernelcheck" ? Command::Kernelcheck
                                       : Command::Describe;
  CLI::App *train = app.get_subcommand("train");
  cl.resume = train->count("--resume") > 0;
  cl.logErrorsWarn = logErrors == "warn";
  if (!cl.timeLimitText.empty()) {
    cl.timeLimitSeconds = parseDuration(cl.timeLimitText);
    if (!cl.timeLimitSeconds)
      return Status::error("--time-limit " + cl.timeLimitText +
                           ": expected a duration such as 90m, 1h30m, 45s "
                           "or 3600 (seconds)");
  }
  if (!cl.timeoutText.empty()) {
    std::optional<double> timeout = parseDuration(cl.timeoutText);
    if (!timeout)
      return Status::error("--timeout " + cl.timeoutText +
                           ": expected a duration such as 5m, 90s or 30 "
                           "(seconds)");
    cl.timeoutSeconds = *timeout;
  }
  if (cl.overwriteCheckpoints && cl.resume)
    return Status::error("--overwrite-checkpoints and --resume: give one of "
                         "them (one continues the checkpoints, the other "
                         "removes them)");
  if (cl.allowBatchChange && !cl.resume)
    return Status::error("--allow-batch-change applies to --resume (a run "
                         "from the beginning takes the batch it is given)");
  if (cl.steps && cl.epochs)
    return Status::error("--steps and --epochs: give one of them");
  if (!std::isfinite(cl.stepSize) || !std::isfinite(cl.tolerance))
    return Status::error("--step-size and --tolerance must be finite");
  if (!std::isfinite(cl.rtol) || !std::isfinite(cl.atol))
    return Status::error("--rtol and --atol must be finite");

  Result<std::vector<FieldPath>> data = fieldPaths("--data", raw.data);
  Result<std::vector<FieldPath>> evalData =
      fieldPaths("--eval-data", raw.evalData);
  Result<std::vector<FieldPath>> inputs = fieldPaths("--input", raw.inputs);
  for (const auto *r : {&data, &evalData, &inputs})
    if (!r->ok())
      return r->status();
  cl.data = data.take();
  cl.evalData = evalData.take();
  cl.inputs = inputs.take();
  return cl;
}

} // namespace modelc::rt
