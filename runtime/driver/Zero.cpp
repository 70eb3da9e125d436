// ZeRO-1: the optimizer state sharded over the ranks in chunks
// (docs/runtime/zero.md).
#include "runtime/driver/Zero.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace modelc::rt {

namespace {

uint64_t alignUp(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

Status internal(const std::string &why) {
  return Status::error("internal error: ZeRO-1: " + why);
}

/// Copies `bytes` into a window of `windowBytes`, zeroing the rest (the
/// last chunk of a parameter is short).
void fill(uint8_t *window, uint64_t windowBytes, const uint8_t *from,
          uint64_t bytes) {
  std::memcpy(window, from, bytes);
  std::memset(window + bytes, 0, windowBytes - bytes);
}

} // namespace

Result<ZeroShards> ZeroShards::create(const Manifest &m,
                                      const TrainInfo &entry, int rank,
                                      int ranks) {
  Result<ZeroShards> z = layout(m, entry, rank, ranks);
  if (!z)
    return z;
  uint64_t shardBytes = 0;
  for (const Chunk &c : z->chunks_)
    if (c.owner == rank)
      shardBytes = c.shardOffset + alignUp(z->stateBytes(c));
  Result<Arena> shard = Arena::allocate(std::max<uint64_t>(shardBytes, 64));
  if (!shard)
    return shard.status();
  z->shard_.emplace(shard.take());
  return z;
}

Result<ZeroShards> ZeroShards::layout(const Manifest &m,
                                      const TrainInfo &entry, int rank,
                                      int ranks) {
  ZeroShards z;
  z.rank_ = rank;
  z.ranks_ = ranks;
  // The windows, one per element type; the state kinds are the same in
  // each (the manifest checked the rest of their form).
  std::vector<std::string> kinds;
  for (const FunctionInfo &f : m.functions) {
    if (f.kind != FunctionKind::UpdateChunk || f.entry != entry.name)
      continue;
    Window w;
    w.fn = f.fn;
    w.param = &m.buffers[f.window[0]];
    w.grad = &m.buffers[f.window[1]];
    std::vector<std::string> keys;
    for (size_t i = 2; i < f.window.size(); ++i) {
      w.state.push_back(&m.buffers[f.window[i]]);
      keys.push_back(m.buffers[f.window[i]].key);
    }
    if (!z.windows_.empty() && keys != kinds)
      return internal("the windows of " + entry.name +
                      " hold different state kinds");
    kinds = keys;
    w.chunk = uint64_t(w.param->shape[0]);
    w.element = dtypeSize(w.param->dtype);
    z.windowBytes_ += w.param->bytes * (2 + w.state.size());
    z.windows_.push_back(std::move(w));
  }
  z.kinds_ = kinds.size();

  // The parameters in order, and the whole state's tensors: each
  // parameter's kinds in turn, as a checkpoint without ZeRO has them.
  uint64_t total = 0;
  for (const std::string &name : entry.zeroParams) {
    const ParamInfo *info = nullptr;
    for (const ParamInfo &p : m.params)
      if (p.name == name)
        info = &p;
    Param p;
    if (info) {
      p.buffer = &m.paramBuffer(*info);
      p.grad = m.gradBuffer(*info);
      for (const Window &w : z.windows_)
        if (w.param->dtype == info->dtype)
          p.window = &w;
    }
    if (!p.buffer || !p.grad || !p.window)
      return internal("no parameter, gradient or window for " + name);
    p.elements = p.buffer->bytes / p.window->element;
    p.firstState = z.wholeInfos_.size();
    for (const std::string &kind : kinds) {
      BufferInfo b = *p.buffer;
      b.name = entry.name + ":state:" + kind + "." + name;
      b.role = Role::State;
      b.phase = Phase::Train;
      b.entry = entry.name;
      b.key = kind + "." + name;
      b.offset = z.wholeBytes_ - 64;
      z.wholeBytes_ += alignUp(b.bytes);
      z.totalBytes_ += b.bytes;
      z.wholeInfos_.push_back(std::move(b));
    }
    total += p.elements;
    z.params_.push_back(p);
  }

  // The chunks, and their owners: rank r owns the chunks that start in
  // [r N / R, (r + 1) N / R) of all N elements laid end to end.
  uint64_t at = 0, shardBytes = 0;
  for (size_t i = 0; i < z.params_.size(); ++i) {
    const Param &p = z.params_[i];
    for (uint64_t first = 0; first < p.elements; first += p.window->chunk) {
      Chunk c;
      c.param = i;
      c.first = first;
      c.count = std::min(p.window->chunk, p.elements - first);
      c.owner = int((unsigned __int128)(at + first) * unsigned(ranks) / total);
      if (c.owner == rank) {
        c.shardOffset = shardBytes;
        shardBytes += alignUp(z.stateBytes(c));
      }
      z.largestChunkState_ = std::max(z.largestChunkState_, z.stateBytes(c));
      z.chunks_.push_back(c);
    }
    at += p.elements;
  }
  return z;
}

Status ZeroShards::update(Arena &arena, dist::Communicator *comm) {
  if (arena.device())
    return internal("the chunk steps run on CPU ranks only");
  for (const Chunk &c : chunks_) {
    if (c.owner != rank_)
      continue;
    const Param &p = params_[c.param];
    const Window &w = *p.window;
    uint64_t bytes = c.count * w.element, at = c.first * w.element;
    uint8_t *state = shard_->at(c.shardOffset);
    fill(arena.at(*w.param), w.param->bytes, arena.at(*p.buffer) + at, bytes);
    fill(arena.at(*w.grad), w.grad->bytes, arena.at(*p.grad) + at, bytes);
    for (size_t k = 0; k < kinds_; ++k)
      fill(arena.at(*w.state[k]), w.state[k]->bytes, state + k * bytes, bytes);
    MODELC_RETURN_IF_ERROR(arena.call(w.fn));
    std::memcpy(arena.at(*p.buffer) + at, arena.at(*w.param), bytes);
    for (size_t k = 0; k < kinds_; ++k)
      std::memcpy(state + k * bytes, arena.at(*w.state[k]), bytes);
  }
  for (const Param &p : params_)
    std::memset(arena.at(*p.grad), 0, p.grad->bytes);
  if (!comm || ranks_ == 1)
    return Status();
  // Each owner's run of chunks of a parameter in one broadcast.
  for (size_t i = 0; i < chunks_.size();) {
    const Chunk &c = chunks_[i];
    uint64_t count = 0;
    size_t j = i;
    for (; j < chunks_.size() && chunks_[j].param == c.param &&
           chunks_[j].owner == c.owner;
         ++j)
      count += chunks_[j].count;
    const Param &p = params_[c.param];
    MODELC_RETURN_IF_ERROR(
        comm->broadcast(arena.at(*p.buffer) + c.first * p.window->element,
                        count * p.window->element, c.owner));
    i = j;
  }
  return Status();
}

Result<std::optional<Arena>> ZeroShards::gather(dist::Communicator *comm) {
  std::optional<Arena> whole;
  if (rank_ == 0) {
    Result<Arena> a = wholeArena();
    if (!a)
      return a.status();
    whole.emplace(a.take());
  }
  Result<Arena> scratch =
      Arena::allocate(std::max<uint64_t>(largestChunkState_, 64));
  if (!scratch)
    return scratch.status();
  for (const Chunk &c : chunks_) {
    uint64_t bytes = stateBytes(c);
    if (!bytes)
      continue;
    bool own = c.owner == rank_;
    uint8_t *block = own ? shard_->at(c.shardOffset) : scratch->data();
    if (comm && ranks_ > 1)
      MODELC_RETURN_IF_ERROR(comm->broadcast(block, bytes, c.owner));
    if (!whole)
      continue;
    const Param &p = params_[c.param];
    uint64_t part = c.count * p.window->element;
    for (size_t k = 0; k < kinds_; ++k)
      std::memcpy(whole->at(wholeInfos_[p.firstState + k]) +
                      c.first * p.window->element,
                  block + k * part, part);
  }
  return whole;
}

void ZeroShards::takeShard(const Arena &whole) {
  for (const Chunk &c : chunks_) {
    if (c.owner != rank_)
      continue;
    const Param &p = params_[c.param];
    uint64_t part = c.count * p.window->element;
    for (size_t k = 0; k < kinds_; ++k)
      std::memcpy(shard_->at(c.shardOffset) + k * part,
                  whole.at(wholeInfos_[p.firstState + k]) +
                      c.first * p.window->element,
                  part);
  }
}

std::vector<NamedBuffer> ZeroShards::wholeState() const {
  std::vector<NamedBuffer> out;
  for (const BufferInfo &b : wholeInfos_)
    out.push_back({b.key, &b});
  return out;
}

std::vector<uint64_t> ZeroShards::bytesPerRank() const {
  std::vector<uint64_t> out(size_t(ranks_), 0);
  for (const Chunk &c : chunks_)
    out[size_t(c.owner)] += stateBytes(c);
  return out;
}

} // namespace modelc::rt
