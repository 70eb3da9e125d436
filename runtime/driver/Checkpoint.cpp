// Writing, pruning, finding and restoring checkpoint directories.
#include "runtime/driver/Checkpoint.h"

#include "runtime/io/Files.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <limits>

namespace modelc::rt {

namespace fs = std::filesystem;

namespace {

constexpr const char *kFiles[] = {"model.safetensors", "optimizer.safetensors",
                                  "state.json"};
constexpr const char *kDiverged = ".diverged";
constexpr int64_t kMaxCount = int64_t(1) << 62;  // steps, epochs, batches
constexpr int64_t kMaxExact = int64_t(1) << 53;  // seed, rng_counter (f64 hypers)

Status fsError(const std::string &what, const fs::path &path,
               const std::error_code &ec) {
  return Status::error(
      fmt::format("cannot {} {}: {}", what, path.string(), ec.message()));
}

Status errnoError(const std::string &what, const fs::path &path) {
  return Status::error(
      fmt::format("cannot {} {}: {}", what, path.string(), strerror(errno)));
}

// N of a name "step_N" (with `suffix` after it), or -1.
int64_t stepOf(const std::string &name, const std::string &suffix = "") {
  if (name.rfind("step_", 0) != 0 || name.size() <= 5 + suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  int64_t n = -1;
  const char *begin = name.data() + 5,
             *end = name.data() + name.size() - suffix.size();
  auto [ptr, ec] = std::from_chars(begin, end, n);
  return ec == std::errc() && ptr == end ? n : -1;
}

bool complete(const fs::path &dir) {
  std::error_code ec;
  for (const char *f : kFiles)
    if (!fs::is_regular_file(dir / f, ec))
      return false;
  return true;
}

// The entries of `dir` named step_N`suffix` that are directories, oldest
// first. A missing `dir` has none.
Result<std::vector<std::pair<int64_t, fs::path>>>
stepDirs(const fs::path &dir, const std::string &suffix = "") {
  std::vector<std::pair<int64_t, fs::path>> out;
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    int64_t n = stepOf(it->path().filename().string(), suffix);
    std::error_code typeError;
    if (n >= 0 && it->is_directory(typeError) && !it->is_symlink(typeError))
      out.push_back({n, it->path()});
  }
  if (ec)
    return fsError("read the checkpoint directory", dir, ec);
  std::sort(out.begin(), out.end());
  return out;
}

// The complete checkpoints of `dir`, oldest first.
Result<std::vector<std::pair<int64_t, fs::path>>>
completeDirs(const fs::path &dir) {
  auto dirs = stepDirs(dir);
  if (!dirs)
    return dirs.status();
  std::vector<std::pair<int64_t, fs::path>> out;
  for (auto &d : *dirs)
    if (complete(d.second))
      out.push_back(d);
  return out;
}

std::string stateJson(const CheckpointState &s) {
  nlohmann::ordered_json j;
  j["step"] = s.step;
  j["epoch"] = s.epoch;
  j["batch_in_epoch"] = s.batchInEpoch;
  j["rng_counter"] = s.rngCounter;
  j["loss_scale"] = s.lossScale;
  j["growth_tracker"] = s.growthTracker;
  j["skipped_steps"] = s.skippedSteps;
  j["precision"] = s.precision;
  j["ranks"] = s.ranks;
  j["accumulate"] = s.accumulate;
  j["cursor_shift"] = s.cursorShift;
  j["source_hash"] = s.sourceHash;
  j["entry"] = s.entry;
  j["total_steps"] = s.totalSteps;
  j["seed"] = s.seed;
  j["params_finite"] = s.paramsFinite;
  nlohmann::ordered_json settings = nlohmann::ordered_json::object();
  for (const auto &[key, value] : s.settings)
    settings[key] = value;
  j["settings"] = settings;
  return j.dump(2) + "\n";
}

// Whether a checkpoint's parameters are known to be finite (older
// checkpoints, without the field, count as finite).
bool finiteParams(const fs::path &dir) {
  Result<CheckpointState> s = readCheckpointState(dir.string());
  return !s || s->paramsFinite;
}

Status prune(const fs::path &dir, int64_t keep) {
  auto dirs = completeDirs(dir);
  if (!dirs)
    return dirs.status();
  // The newest checkpoint with finite parameters stays, whatever `keep`.
  fs::path newestFinite;
  for (auto it = dirs->rbegin(); it != dirs->rend(); ++it)
    if (finiteParams(it->second)) {
      newestFinite = it->second;
      break;
    }
  std::error_code ec;
  for (size_t i = 0; i + size_t(keep) < dirs->size(); ++i) {
    const fs::path &old = (*dirs)[i].second;
    if (old == newestFinite)
      continue;
    if (fs::remove_all(old, ec) == uintmax_t(-1) || ec)
      return fsError("remove", old, ec);
  }
  return Status();
}

// Moves `tmp` to `final`. An existing `final` is exchanged with `tmp` in one
// step and then removed, so that a kill at any moment leaves a complete
// step_N; where the file system cannot exchange, the old one is moved
// aside first.
Status moveIntoPlace(const fs::path &tmp, const fs::path &final) {
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final.c_str(),
                  RENAME_NOREPLACE) == 0)
    return Status();
  if (errno == EEXIST) {
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final.c_str(),
                    RENAME_EXCHANGE) != 0)
      return errnoError("replace", final);
    std::error_code ec;
    fs::remove_all(tmp, ec); // now the old step_N
    if (ec)
      return fsError("remove the replaced checkpoint", tmp, ec);
    return Status();
  }
  if (errno != EINVAL && errno != ENOSYS)
    return errnoError("rename into place", final);
  // No renameat2 flags here (some network file systems).
  std::error_code ec;
  fs::path aside = tmp;
  aside += ".old";
  if (fs::exists(final, ec)) {
    fs::rename(final, aside, ec);
    if (ec)
      return fsError("move aside", final, ec);
  }
  fs::rename(tmp, final, ec);
  if (ec)
    return fsError("rename into place", final, ec);
  fs::remove_all(aside, ec);
  return Status();
}

/// A field of state.json out of its range: thrown by integerField, caught
/// by parseCheckpointState.
struct BadField {
  Status status;
};

// One field of state.json: an integer in [lo, hi].
template <typename T>
T integerField(const nlohmann::json &j, const char *key, T lo, T hi,
               const std::string &path) {
  const nlohmann::json &v = j.at(key);
  auto bad = [&](const std::string &why) {
    return BadField{Status::error(fmt::format(
        "{}: \"{}\" {}; was the file edited?", path, key, why))};
  };
  if (!v.is_number_integer())
    throw bad(fmt::format("must be an integer from {} to {}, not {}", lo, hi,
                          v.dump()));
  bool inRange = v.is_number_unsigned()
                     ? v.get<uint64_t>() >= uint64_t(std::max<T>(lo, 0)) &&
                           v.get<uint64_t>() <= uint64_t(hi)
                     : v.get<int64_t>() >= int64_t(lo) &&
                           v.get<int64_t>() <= int64_t(hi);
  if (!inRange)
    throw bad(fmt::format("is {}, outside {} to {}", v.dump(), lo, hi));
  return v.get<T>();
}

} // namespace

uint64_t checkpointBytes(const CheckpointTensors &tensors) {
  uint64_t bytes = 4096; // state.json and the safetensors headers
  for (const auto *list : {&tensors.params, &tensors.state})
    for (const NamedBuffer &nb : *list)
      bytes += nb.buffer->bytes + 128;
  return bytes;
}

Result<std::string> writeCheckpoint(const std::string &dir,
                                    const CheckpointState &state,
                                    const CheckpointTensors &tensors,
                                    const Arena &arena, int64_t keep) {
  std::error_code ec;
  fs::path root(dir);
  fs::create_directories(root, ec);
  if (ec)
    return fsError("create", root, ec);
  Result<std::string> made = createUniqueDirectory(
      (root / fmt::format(".step_{}.tmp.", state.step)).string());
  if (!made)
    return made.status();
  fs::path tmp(*made);
  fs::path final = root / fmt::format("step_{}", state.step);
  auto discard = [&](Status s) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    return s;
  };
  for (Status s :
       {saveTensors((tmp / kFiles[0]).string(), tensors.params, arena),
        saveTensors((tmp / kFiles[1]).string(), tensors.state,
                    tensors.stateArena ? *tensors.stateArena : arena),
        writeFileAtomically((tmp / kFiles[2]).string(), stateJson(state))})
    if (!s.ok())
      return discard(s);
  Status moved = moveIntoPlace(tmp, final);
  if (!moved.ok())
    return discard(moved);
  MODELC_RETURN_IF_ERROR(syncDirectory(root.string()));
  if (keep > 0)
    MODELC_RETURN_IF_ERROR(prune(root, keep));
  return final.string();
}

Result<std::optional<std::string>> newestCheckpoint(const std::string &dir) {
  return lastGoodCheckpoint(dir, std::numeric_limits<int64_t>::max());
}

Result<std::optional<std::string>> lastGoodCheckpoint(const std::string &dir,
                                                      int64_t maxStep) {
  auto dirs = completeDirs(dir);
  if (!dirs)
    return dirs.status();
  for (auto it = dirs->rbegin(); it != dirs->rend(); ++it)
    if (it->first <= maxStep && finiteParams(it->second))
      return std::optional<std::string>(it->second.string());
  return std::optional<std::string>();
}

Result<std::string> markDiverged(const std::string &dir, int64_t step) {
  fs::path from = fs::path(dir) / fmt::format("step_{}", step);
  fs::path to = fs::path(dir) / fmt::format("step_{}{}", step, kDiverged);
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(from, ec)))
    return std::string();
  fs::remove_all(to, ec);
  fs::rename(from, to, ec);
  if (ec)
    return fsError("rename", from, ec);
  MODELC_RETURN_IF_ERROR(syncDirectory(dir));
  return to.string();
}

Result<std::string> foreignCheckpoint(const std::string &dir,
                                      const CheckpointState &identity) {
  auto dirs = completeDirs(dir);
  if (!dirs)
    return dirs.status();
  for (const auto &[step, path] : *dirs) {
    Result<CheckpointState> s = readCheckpointState(path.string());
    std::string name = path.string();
    if (!s)
      return fmt::format("{} cannot be read ({})", name, s.status().message());
    if (s->sourceHash != identity.sourceHash)
      return fmt::format("{} is of another model (source hash {})", name,
                         s->sourceHash.substr(0, 12));
    if (s->entry != identity.entry)
      return fmt::format("{} is of train entry '{}'", name, s->entry);
    if (s->seed != identity.seed)
      return fmt::format("{} is of seed {}, this run's is {}", name, s->seed,
                         identity.seed);
    if (s->totalSteps != identity.totalSteps)
      return fmt::format("{} is of a run of {} steps, this one has {}", name,
                         s->totalSteps, identity.totalSteps);
    if (s->settings.empty())
      return fmt::format("{} records no settings (an older program's)", name);
    for (const auto &[key, value] : identity.settings) {
      auto found = std::find_if(s->settings.begin(), s->settings.end(),
                                [&](const auto &kv) { return kv.first == key; });
      std::string theirs = found == s->settings.end() ? "unset" : found->second;
      if (theirs != value)
        return fmt::format("{} is of {}={}, this run's is {}", name, key,
                           theirs, value);
    }
  }
  return std::string();
}

Result<int64_t> removeCheckpoints(const std::string &dir) {
  int64_t removed = 0;
  std::error_code ec;
  for (const std::string suffix : {"", kDiverged}) {
    auto dirs = stepDirs(dir, suffix);
    if (!dirs)
      return dirs.status();
    for (const auto &d : *dirs) {
      if (fs::remove_all(d.second, ec) == uintmax_t(-1) || ec)
        return fsError("remove", d.second, ec);
      ++removed;
    }
  }
  MODELC_RETURN_IF_ERROR(removeTemporaries(dir));
  return removed;
}

Status removeTemporaries(const std::string &dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return Status();
  std::vector<fs::path> leftovers;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(".step_", 0) == 0 && name.find(".tmp") != std::string::npos)
      leftovers.push_back(it->path());
  }
  if (ec)
    return fsError("read the checkpoint directory", dir, ec);
  for (const fs::path &p : leftovers)
    if (fs::remove_all(p, ec) == uintmax_t(-1) || ec)
      return fsError("remove", p, ec);
  return Status();
}

Result<CheckpointState> readCheckpointState(const std::string &stepDir) {
  std::string path = (fs::path(stepDir) / kFiles[2]).string();
  Result<std::string> text = readWholeFile(path, 1 << 20);
  if (!text)
    return Status::error(text.status().message());
  return parseCheckpointState(*text, path);
}

Result<CheckpointState> parseCheckpointState(const std::string &text,
                                             const std::string &path) {
  // nlohmann's parser stops at a NUL: '{...}\0garbage' would pass.
  if (size_t nul = text.find('\0'); nul != std::string::npos)
    return Status::error(fmt::format(
        "{}: not a checkpoint state: a NUL byte at offset {}", path, nul));
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object())
      return Status::error(path + ": not a checkpoint state: not a JSON object");
    CheckpointState s;
    s.step = integerField<int64_t>(j, "step", 0, kMaxCount, path);
    // After --allow-batch-change the cursor may be ahead of the step count.
    if (j.contains("cursor_shift"))
      s.cursorShift = integerField<int64_t>(j, "cursor_shift", -kMaxCount,
                                            kMaxCount, path);
    s.epoch = integerField<int64_t>(
        j, "epoch", 0, s.step + std::max<int64_t>(s.cursorShift, 0), path);
    s.batchInEpoch =
        integerField<int64_t>(j, "batch_in_epoch", 0, kMaxCount, path);
    s.rngCounter =
        integerField<uint64_t>(j, "rng_counter", 0, kMaxExact, path);
    s.totalSteps =
        integerField<int64_t>(j, "total_steps", s.step, kMaxCount, path);
    s.seed = integerField<uint64_t>(j, "seed", 0, kMaxExact, path);
    const nlohmann::json &scale = j.at("loss_scale");
    if (!scale.is_number() || !std::isfinite(scale.get<double>()) ||
        scale.get<double>() <= 0)
      return Status::error(fmt::format(
          "{}: \"loss_scale\" must be a finite number > 0, not {}", path,
          scale.dump()));
    s.lossScale = scale.get<double>();
    // Older checkpoints have no loss-scaling state: f32 or bf16 runs.
    if (j.contains("growth_tracker"))
      s.growthTracker =
          integerField<int64_t>(j, "growth_tracker", 0, kMaxCount, path);
    if (j.contains("skipped_steps"))
      s.skippedSteps =
          integerField<int64_t>(j, "skipped_steps", 0, s.step, path);
    if (j.contains("precision"))
      s.precision = j.at("precision").get<std::string>();
    // Older checkpoints: one rank, the entry's accumulation (0).
    if (j.contains("ranks"))
      s.ranks = integerField<int64_t>(j, "ranks", 1, kMaxCount, path);
    if (j.contains("accumulate"))
      s.accumulate =
          integerField<int64_t>(j, "accumulate", 0, kMaxCount, path);
    s.sourceHash = j.at("source_hash").get<std::string>();
    s.entry = j.at("entry").get<std::string>();
    if (j.contains("params_finite"))
      s.paramsFinite = j.at("params_finite").get<bool>();
    if (j.contains("settings"))
      for (const auto &[key, value] : j.at("settings").items())
        s.settings.push_back({key, value.get<std::string>()});
    return s;
  } catch (const BadField &bad) {
    return bad.status;
  } catch (const nlohmann::json::exception &e) {
    return Status::error(path + ": not a checkpoint state: " + e.what());
  }
}

Result<CheckpointState> restoreCheckpoint(const std::string &stepDir,
                                          const std::string &sourceHash,
                                          const std::string &entry,
                                          const CheckpointTensors &tensors,
                                          Arena &arena) {
  Result<CheckpointState> state = readCheckpointState(stepDir);
  if (!state)
    return state.status();
  if (state->sourceHash != sourceHash)
    return Status::error(fmt::format(
        "{} is a checkpoint of a different model (source hash {}, this "
        "program's is {}); resume from this model's checkpoints or start "
        "without --resume",
        stepDir, state->sourceHash, sourceHash));
  if (state->entry != entry)
    return Status::error(
        fmt::format("{} is a checkpoint of train entry '{}', not '{}'", stepDir,
                    state->entry, entry));
  MODELC_RETURN_IF_ERROR(loadTensors((fs::path(stepDir) / kFiles[0]).string(),
                                     tensors.params, arena, "parameters"));
  MODELC_RETURN_IF_ERROR(loadTensors((fs::path(stepDir) / kFiles[1]).string(),
                                     tensors.state,
                                     tensors.stateArena ? *tensors.stateArena
                                                        : arena,
                                     "optimizer state"));
  return state;
}

} // namespace modelc::rt
