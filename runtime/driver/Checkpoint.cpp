// Writing, pruning, finding and restoring checkpoint directories.
#include "runtime/driver/Checkpoint.h"

#include "runtime/io/Files.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>

namespace modelc::rt {

namespace fs = std::filesystem;

namespace {

constexpr const char *kFiles[] = {"model.safetensors", "optimizer.safetensors",
                                  "state.json"};

Status fsError(const std::string &what, const fs::path &path,
               const std::error_code &ec) {
  return Status::error(
      fmt::format("cannot {} {}: {}", what, path.string(), ec.message()));
}

// N of a directory named "step_N", or -1.
int64_t stepOf(const std::string &name) {
  if (name.rfind("step_", 0) != 0 || name.size() == 5)
    return -1;
  int64_t n = -1;
  const char *begin = name.data() + 5, *end = name.data() + name.size();
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

// The step directories of `dir`, oldest first.
std::vector<std::pair<int64_t, fs::path>> stepDirs(const fs::path &dir,
                                                   std::error_code &ec) {
  std::vector<std::pair<int64_t, fs::path>> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    int64_t n = stepOf(it->path().filename().string());
    std::error_code typeError;
    if (n >= 0 && it->is_directory(typeError))
      out.push_back({n, it->path()});
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string stateJson(const CheckpointState &s) {
  nlohmann::ordered_json j;
  j["step"] = s.step;
  j["epoch"] = s.epoch;
  j["batch_in_epoch"] = s.batchInEpoch;
  j["rng_counter"] = s.rngCounter;
  j["loss_scale"] = s.lossScale;
  j["source_hash"] = s.sourceHash;
  j["entry"] = s.entry;
  j["total_steps"] = s.totalSteps;
  j["seed"] = s.seed;
  return j.dump(2) + "\n";
}

Status prune(const fs::path &dir, int64_t keep) {
  std::error_code ec;
  auto dirs = stepDirs(dir, ec);
  if (ec)
    return fsError("list", dir, ec);
  for (size_t i = 0; i + size_t(keep) < dirs.size(); ++i)
    if (fs::remove_all(dirs[i].second, ec) == uintmax_t(-1) || ec)
      return fsError("remove", dirs[i].second, ec);
  return Status();
}

} // namespace

Result<std::string> writeCheckpoint(const std::string &dir,
                                    const CheckpointState &state,
                                    const CheckpointTensors &tensors,
                                    const Arena &arena, int64_t keep) {
  std::error_code ec;
  fs::path root(dir);
  fs::create_directories(root, ec);
  if (ec)
    return fsError("create", root, ec);
  fs::path tmp = root / fmt::format(".step_{}.tmp", state.step);
  fs::path final = root / fmt::format("step_{}", state.step);
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec) || ec)
    return fsError("create", tmp, ec);
  MODELC_RETURN_IF_ERROR(
      saveTensors((tmp / kFiles[0]).string(), tensors.params, arena));
  MODELC_RETURN_IF_ERROR(
      saveTensors((tmp / kFiles[1]).string(), tensors.state, arena));
  MODELC_RETURN_IF_ERROR(
      writeFileAtomically((tmp / kFiles[2]).string(), stateJson(state)));
  fs::remove_all(final, ec);
  fs::rename(tmp, final, ec);
  if (ec)
    return fsError("rename into place", final, ec);
  if (keep > 0)
    MODELC_RETURN_IF_ERROR(prune(root, keep));
  return final.string();
}

Result<std::string> newestCheckpoint(const std::string &dir) {
  std::error_code ec;
  auto dirs = stepDirs(dir, ec);
  if (ec)
    return fsError("read the checkpoint directory", dir, ec);
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
    if (complete(it->second))
      return it->second.string();
  return Status::error("no complete checkpoint (step_N with " +
                       std::string(kFiles[0]) + ", " + kFiles[1] + ", " +
                       kFiles[2] + ") in " + dir);
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
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    CheckpointState s;
    s.step = j.at("step").get<int64_t>();
    s.epoch = j.at("epoch").get<int64_t>();
    s.batchInEpoch = j.at("batch_in_epoch").get<int64_t>();
    s.rngCounter = j.at("rng_counter").get<uint64_t>();
    s.lossScale = j.at("loss_scale").get<double>();
    s.sourceHash = j.at("source_hash").get<std::string>();
    s.entry = j.at("entry").get<std::string>();
    s.totalSteps = j.at("total_steps").get<int64_t>();
    s.seed = j.at("seed").get<uint64_t>();
    if (s.step < 0 || s.epoch < 0 || s.batchInEpoch < 0)
      return Status::error(path + ": negative step or data cursor");
    return s;
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
                                     tensors.state, arena, "optimizer state"));
  return state;
}

} // namespace modelc::rt
