// How a run's ranks are started (TrainRanks.cpp): as threads of this
// process over Gloo (`--ranks`) or NCCL (`--gpus`), or as one of several
// processes meeting at a rendezvous store (--nnodes, or a launcher's
// variables); each rank then runs trainRank (Trainer.cpp), the training
// loop on its arena. Internal to the driver.
#pragma once

#include "runtime/dist/Communicator.h"
#include "runtime/dist/GpuRank.h"
#include "runtime/dist/Nccl.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/CommandLine.h"
#include "runtime/driver/Devices.h"
#include "runtime/driver/Manifest.h"
#include "runtime/driver/RunLog.h"
#include "runtime/driver/TrainPlan.h"

#include <chrono>

namespace modelc::rt {

/// Where a training loop stands among the data-parallel ranks (spec §7):
/// rank `rank` of `ranks`, talking over `comm` (null with one rank).
struct RankPlace {
  int rank = 0, ranks = 1;
  dist::Communicator *comm = nullptr;
  /// A GPU rank's NCCL communicator of device memory (comm is then its
  /// host-memory one); null on CPU ranks.
  dist::NcclCommunicator *nccl = nullptr;
  bool leader() const { return rank == 0; }
};

/// What every rank of a run shares: resolved once, read-only.
struct RunShared {
  const Manifest &m;
  const CommandLine &cl;
  const TrainPlan &plan;
  const CheckpointState &identity;
  const DeviceChoice &device;
  std::chrono::steady_clock::time_point started;
};

/// What a rank of `--gpus` joins with: its GPU, the run's NCCL id and the
/// process's group of GPU ranks. `secondary` is set when the rank stopped
/// only because another could not open its GPU.
struct GpuJoin {
  int ordinal;
  const dist::NcclId &id;
  dist::GpuRankGroup &group;
  bool secondary = false;
};

/// One rank's training: its arena, initialised alike on every rank (the
/// same seed), the loop, and on rank 0 the log, the banner and what is
/// kept at the end. A rank of `--gpus` (`gpuJoin`) first opens its GPU and
/// joins the others over NCCL.
Status trainRank(const RunShared &run, RankPlace place, ProgramIO &io,
                 GpuJoin *gpuJoin = nullptr);

/// `--cpu --ranks R`: R ranks as threads of this process, joined over
/// Gloo's TCP transport on loopback through a rendezvous in memory.
Status trainThreadRanks(const RunShared &run, ProgramIO &io);

/// `--gpus`: a rank per GPU, as threads of this process, over NCCL.
Status trainGpuRanks(const RunShared &run, ProgramIO &io);

/// A run of several processes (--nnodes, or a launcher's variables): node
/// 0 serves the rendezvous store, every process runs its ranks as threads
/// over Gloo (CPU ranks) or NCCL (GPU ranks), with a heartbeat in the
/// store; a lost process is named and stops the others with exit 4.
Status trainProcesses(const RunShared &run, ProgramIO &io);

} // namespace modelc::rt
