// The checks of a training run's outputs before its first step (see
// Preflight.h).
#include "runtime/driver/Preflight.h"

#include "runtime/driver/Text.h"
#include "runtime/io/Files.h"

#include <fmt/format.h>

#include <filesystem>

namespace modelc::rt {

namespace fs = std::filesystem;

namespace {

/// A warning when the file system of `dir` has less room than `bytes`.
void warnIfShort(const std::string &dir, uint64_t bytes,
                 const std::string &what, ProgramIO &io) {
  std::optional<uint64_t> free = freeBytes(dir);
  if (free && *free < bytes)
    io.err << fmt::format("warning: {} has {} free, {} needs {}; the run "
                          "goes on, but that write may fail\n",
                          dir, formatBytes(*free), what, formatBytes(bytes));
}

Status preflightCheckpoints(const TrainPlan &p, const CommandLine &cl,
                            const CheckpointState &identity, ProgramIO &io) {
  const CheckpointConfig &ck = p.checkpoint;
  std::error_code ec;
  fs::create_directories(ck.dir, ec);
  if (ec)
    return Status::error(fmt::format("checkpoint directory {}: cannot create "
                                     "it: {}",
                                     ck.dir, ec.message()));
  MODELC_RETURN_IF_ERROR(checkWritable(
      (fs::path(ck.dir) / "step_0").string(), "checkpoint directory"));
  MODELC_RETURN_IF_ERROR(removeTemporaries(ck.dir));
  // A run that continues the checkpoints it resumed from is their run.
  bool continues = !ck.resumeFrom.empty() && ck.dir == ck.resumeDir;
  if (!continues) {
    Result<std::string> foreign = foreignCheckpoint(ck.dir, identity);
    if (!foreign)
      return foreign.status();
    if (!foreign->empty() && !cl.overwriteCheckpoints)
      return Status::error(fmt::format(
          "checkpoint directory {} holds checkpoints of another run ({}); "
          "continue that run with --resume {}, remove them with "
          "--overwrite-checkpoints, or give another --checkpoint-dir",
          ck.dir, *foreign, ck.dir));
    if (cl.overwriteCheckpoints) {
      Result<int64_t> removed = removeCheckpoints(ck.dir);
      if (!removed)
        return removed.status();
      if (*removed > 0)
        io.err << fmt::format("removed {} checkpoint{} from {} "
                              "(--overwrite-checkpoints)\n",
                              *removed, *removed == 1 ? "" : "s", ck.dir);
    }
  }
  // An existing step_N is exchanged with the new one: two at once. Under
  // ZeRO-1 the state is in no arena buffer, but in the file as without.
  warnIfShort(ck.dir, 2 * (checkpointBytes(p.tensors) + p.shardedStateBytes),
              "a checkpoint", io);
  return Status();
}

} // namespace

CheckpointState runIdentity(const TrainPlan &p, const std::string &sourceHash) {
  CheckpointState s;
  s.sourceHash = sourceHash;
  s.entry = p.entry->name;
  s.totalSteps = p.totalSteps;
  s.seed = p.settings.seed;
  s.settings = trajectorySettings(p.settings);
  return s;
}

Status preflightTraining(const TrainPlan &p, const CommandLine &cl,
                         const CheckpointState &identity, ProgramIO &io) {
  if (!cl.save.empty()) {
    MODELC_RETURN_IF_ERROR(checkWritable(cl.save, "--save"));
    warnIfShort(directoryOf(cl.save), checkpointBytes({p.tensors.params, {}}),
                "--save", io);
  }
  if (!p.checkpoint.dir.empty())
    MODELC_RETURN_IF_ERROR(preflightCheckpoints(p, cl, identity, io));
  if (!p.checkpoint.notice.empty())
    io.err << p.checkpoint.notice << "\n";
  return Status();
}

} // namespace modelc::rt
