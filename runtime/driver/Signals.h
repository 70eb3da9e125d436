// SIGINT/SIGTERM during training: the first one is recorded so that the
// loop can checkpoint after the current step and stop; a second one stops
// the program at once.
#pragma once

namespace modelc::rt {

/// Installs the handlers for its lifetime and restores the previous ones.
class SignalGuard {
public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard &) = delete;
  SignalGuard &operator=(const SignalGuard &) = delete;

  /// The signal received since construction, or 0.
  static int pending();
};

} // namespace modelc::rt
