// Where this process stands in a distributed run (docs/runtime/distributed.md,
// "Launch"): from the flags `--nnodes N --node-rank I --master HOST:PORT
// [--ranks-per-node K]`, or from the variables a launcher sets: torchrun's
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), Slurm's
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID with MASTER_ADDR/MASTER_PORT)
// or OpenMPI's (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK with
// MASTER_ADDR/MASTER_PORT). Pure: the environment comes in as a function.
#pragma once

#include "runtime/support/Status.h"

#include <functional>
#include <optional>
#include <string>

namespace modelc::rt::dist {

/// What the command line said; unset = not given.
struct LaunchFlags {
  std::optional<int> nnodes, nodeRank, ranksPerNode;
  std::optional<std::string> master; // "HOST:PORT", "[IPv6]:PORT"
};

/// A run of `processes` processes ("nodes" in the flags' terms), each
/// running `ranksPerProcess` consecutive ranks; this is process `process`.
/// A launcher that starts one process per rank (torchrun, srun, mpirun)
/// gives ranksPerProcess 1 and `localIndex` = the process's place among
/// those on its machine (its GPU, for --gpus).
struct LaunchPlan {
  int processes = 1, process = 0, ranksPerProcess = 1, localIndex = 0;
  std::string masterHost; // empty for a single process
  int masterPort = 0;
  std::string source = "flags"; // or "torchrun", "Slurm", "OpenMPI"
  int worldSize() const { return processes * ranksPerProcess; }
  int firstRank() const { return process * ranksPerProcess; }
};

using Getenv = std::function<const char *(const char *)>;

/// The plan from `flags` and the launcher variables `getenv` finds.
/// Variables fill in what the flags leave out; a flag and a variable that
/// disagree are a usage error naming both. `localRanks` is the ranks this
/// process runs unless --ranks-per-node says (the --ranks or --gpus count).
Result<LaunchPlan> resolveLaunch(const LaunchFlags &flags, int localRanks,
                                 const Getenv &getenv);

/// "HOST:PORT" or "[IPv6]:PORT" with a port in 1..65535.
Result<std::pair<std::string, int>> parseHostPort(const std::string &text,
                                                  const std::string &what);

} // namespace modelc::rt::dist
