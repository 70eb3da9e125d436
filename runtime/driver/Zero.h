// ZeRO-1 (`parallel { zero = 1 }`, docs/runtime/zero.md): the optimizer
// state sharded over the data-parallel ranks. The parameters a zero entry
// updates are cut into chunks (of the size of the program's windows), and
// each rank owns a contiguous run of them, about 1/R of all elements, and
// keeps only their state. The compiled `update` prepares the gradients
// (unscaling, global norm, clipping: every rank has all of them after the
// all-reduce); then each rank copies each chunk it owns, with its gradient
// and state, into the window of its element type, runs the compiled
// elementwise step there (`update_chunk`) and copies the parameter and
// state back. Every gradient is then zeroed and each chunk of parameters
// comes from its owner by broadcast.
#pragma once

#include "runtime/driver/Arena.h"
#include "runtime/driver/Weights.h"
#include "runtime/dist/Communicator.h"

#include <optional>

namespace modelc::rt {

class ZeroShards {
public:
  /// The shards of train entry `entry` (zero = 1) for `rank` of `ranks`;
  /// the shard's state starts at zero, as the arena's would.
  static Result<ZeroShards> create(const Manifest &m, const TrainInfo &entry,
                                   int rank, int ranks);
  /// The same partition without a shard (for `describe`): only the
  /// sizes below are meaningful.
  static Result<ZeroShards> plan(const Manifest &m, const TrainInfo &entry,
                                 int ranks) {
    return layout(m, entry, 0, ranks);
  }

  /// After the entry's `update` ran on `arena` (the CPU's): the step of
  /// every owned chunk through its window, all gradients zeroed, and every
  /// chunk of parameters broadcast from its owner over `comm` (null with
  /// one rank). Collective.
  Status update(Arena &arena, dist::Communicator *comm);

  /// The whole optimizer state in an arena of its own, laid out as
  /// `wholeState()` says. Collective: rank 0 gets it from every owner
  /// (the others get nullopt), for a checkpoint.
  Result<std::optional<Arena>> gather(dist::Communicator *comm);
  /// An empty (zero) arena for the whole state, to restore a checkpoint
  /// into; `takeShard` then keeps this rank's part.
  Result<Arena> wholeArena() const { return Arena::allocate(wholeBytes_); }
  void takeShard(const Arena &whole);
  /// The state tensors in the whole-state arena, named as a checkpoint
  /// names them ("m.fc1.weight", ...), each parameter's kinds in turn: the
  /// layout of optimizer.safetensors with or without ZeRO.
  std::vector<NamedBuffer> wholeState() const;

  int ranks() const { return ranks_; }
  /// State bytes of all parameters, and held by each rank.
  uint64_t totalBytes() const { return totalBytes_; }
  std::vector<uint64_t> bytesPerRank() const;
  /// The arena's windows (a chunk of parameter, gradient and state).
  uint64_t windowBytes() const { return windowBytes_; }
  /// Elements per chunk (of the first window: they are all alike).
  uint64_t chunkElements() const {
    return windows_.empty() ? 0 : windows_.front().chunk;
  }

private:
  /// The window of one element type and its chunk step.
  struct Window {
    modelc_fn fn = nullptr;
    const BufferInfo *param = nullptr, *grad = nullptr;
    std::vector<const BufferInfo *> state; // one per kind
    uint64_t chunk = 0;                    // elements
    uint64_t element = 0;                  // bytes of one
  };
  struct Param {
    const BufferInfo *buffer = nullptr, *grad = nullptr;
    const Window *window = nullptr;
    uint64_t elements = 0;
    size_t firstState = 0; // its kinds' index in wholeInfos_
  };
  /// Elements [first, first + count) of parameter `param`, owned by
  /// `owner`; `shardOffset`: where its state is in this rank's shard
  /// (each kind's `count` elements in turn).
  struct Chunk {
    size_t param = 0;
    uint64_t first = 0, count = 0;
    int owner = 0;
    uint64_t shardOffset = 0;
  };
  ZeroShards() = default;
  /// Windows, parameters, chunks and owners; no shard yet.
  static Result<ZeroShards> layout(const Manifest &m, const TrainInfo &entry,
                                   int rank, int ranks);
  uint64_t stateBytes(const Chunk &c) const {
    return kinds_ * c.count * params_[c.param].window->element;
  }

  int rank_ = 0, ranks_ = 1;
  size_t kinds_ = 0;
  std::vector<Window> windows_;
  std::vector<Param> params_;
  std::vector<Chunk> chunks_;
  /// The whole state's tensors, as laid out in the whole-state arena.
  std::vector<BufferInfo> wholeInfos_;
  std::optional<Arena> shard_;
  uint64_t totalBytes_ = 0, windowBytes_ = 0, wholeBytes_ = 64;
  uint64_t largestChunkState_ = 0;
};

} // namespace modelc::rt
