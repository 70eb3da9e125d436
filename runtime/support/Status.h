// Errors as values in the runtime: a Status (ok or a message for the user)
// and Result<T> (a value or a Status). The message names the file and the
// problem; the program's main prints it once and exits with `exitCode`.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace modelc::rt {

/// Exit statuses of spec §10, and kExitLostRank: a distributed run lost a
/// rank (it died, stopped answering or never joined; docs/runtime/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitUsage = 2,
  kExitDiverged = 3,
  kExitLostRank = 4
};

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status error(std::string message, int exitCode = kExitUsage) {
    Status s;
    s.message_ = std::move(message);
    s.exitCode_ = exitCode;
    return s;
  }
  bool ok() const { return !message_.has_value(); }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return *message_; }
  int exitCode() const { return exitCode_; }

private:
  std::optional<std::string> message_;
  int exitCode_ = kExitOk;
};

template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {}
  bool ok() const { return status_.ok(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  T take() { return std::move(*value_); }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace modelc::rt

/// Returns from the enclosing function when `expr` (a Status) is an error.
#define MODELC_RETURN_IF_ERROR(expr)                                           \
  do {                                                                         \
    ::modelc::rt::Status modelc_status_ = (expr);                              \
    if (!modelc_status_.ok())                                                  \
      return modelc_status_;                                                   \
  } while (0)
