// Step, eval and JSON log lines (see RunLog.h and docs/runtime/cli.md).
#include "runtime/driver/RunLog.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace modelc::rt {

namespace {
constexpr int kBarWidth = 24;
} // namespace

Result<RunLog> RunLog::open(ProgramIO &io, const std::string &path, bool append,
                            int64_t totalSteps, std::vector<std::string> names,
                            bool tokens) {
  RunLog log(io);
  log.path_ = path;
  log.totalSteps_ = totalSteps;
  log.names_ = std::move(names);
  log.tokens_ = tokens;
  if (!path.empty()) {
    log.fd_ = ::open(path.c_str(),
                     O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC),
                     0644);
    if (log.fd_ < 0)
      return Status::error(fmt::format("--log {}: cannot open for writing: {}",
                                       path, std::strerror(errno)));
  }
  return log;
}

RunLog::RunLog(RunLog &&other) noexcept
    : io_(other.io_), fd_(other.fd_), fileStatus_(std::move(other.fileStatus_)),
      path_(std::move(other.path_)), totalSteps_(other.totalSteps_),
      names_(std::move(other.names_)), tokens_(other.tokens_),
      barOpen_(other.barOpen_) {
  other.fd_ = -1;
}

RunLog::~RunLog() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status RunLog::close() {
  if (fd_ >= 0) {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && fileStatus_.ok())
      fileStatus_ = Status::error(fmt::format(
          "--log {}: cannot write: {}", path_, std::strerror(errno)));
  }
  return fileStatus_;
}

void RunLog::step(const StepRecord &r) {
  std::string text =
      fmt::format("{}/{} loss {:.4f}", r.step, totalSteps_, r.loss);
  for (size_t i = 0; i < r.metrics.size(); ++i)
    text += fmt::format(" {} {:.4f}", names_[i + 1], r.metrics[i]);
  if (r.lr)
    text += fmt::format(" lr {:.1e}", *r.lr);
  if (r.lossScale)
    text += fmt::format(" scale {:g} skipped {}", *r.lossScale,
                        r.skippedSteps.value_or(0));
  text += fmt::format(" {} {:.0f}", tokens_ ? "tokens/s" : "samples/s",
                      r.throughput);
  if (io_->outIsTerminal) {
    int filled = int(kBarWidth * r.step / std::max<int64_t>(totalSteps_, 1));
    io_->out << "\r[" << std::string(size_t(filled), '=')
             << std::string(size_t(kBarWidth - filled), ' ') << "] " << text
             << "\x1b[K" << std::flush;
    barOpen_ = true;
  } else {
    io_->out << "step " << text << "\n" << std::flush;
  }

  nlohmann::ordered_json j;
  j["step"] = r.step;
  j["loss"] = r.loss;
  for (size_t i = 0; i < r.metrics.size(); ++i)
    j[names_[i + 1]] = r.metrics[i];
  if (r.lr)
    j["lr"] = *r.lr;
  j[tokens_ ? "tokens_per_s" : "samples_per_s"] = r.throughput;
  if (r.gradNorm)
    j["grad_norm"] = *r.gradNorm;
  if (r.lossScale)
    j["loss_scale"] = *r.lossScale;
  if (r.skippedSteps)
    j["skipped_steps"] = *r.skippedSteps;
  writeJson(j.dump());
}

void RunLog::eval(std::optional<int64_t> step,
                  const std::vector<double> &values) {
  endBar();
  std::string text = step ? fmt::format("eval step {}", *step) : "eval";
  nlohmann::ordered_json j;
  if (step)
    j["step"] = *step;
  j["eval"] = true;
  for (size_t i = 0; i < values.size(); ++i) {
    text += fmt::format(" {} {:.4f}", names_[i], values[i]);
    j[names_[i]] = values[i];
  }
  io_->out << text << "\n" << std::flush;
  writeJson(j.dump());
}

void RunLog::finish() { endBar(); }

void RunLog::endBar() {
  if (barOpen_)
    io_->out << "\n" << std::flush;
  barOpen_ = false;
}

void RunLog::writeJson(const std::string &line) {
  if (fd_ < 0 || !fileStatus_.ok())
    return;
  // One write per line, so that a full disk cuts the log between lines.
  std::string text = line + "\n";
  const char *p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t put = ::write(fd_, p, left);
    if (put < 0 && errno == EINTR)
      continue;
    if (put <= 0) {
      fileStatus_ = Status::error(
          fmt::format("--log {}: cannot write: {}", path_,
                      put < 0 ? std::strerror(errno) : "no progress"));
      // Cut a partial line back, so that the log stays JSON lines.
      if (left != text.size()) {
        off_t end = ::lseek(fd_, 0, SEEK_END);
        if (end >= 0)
          (void)!::ftruncate(fd_, end - off_t(text.size() - left));
      }
      return;
    }
    p += put;
    left -= size_t(put);
  }
}

} // namespace modelc::rt
