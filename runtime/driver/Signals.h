// SIGINT/SIGTERM during training: the first one is recorded so that the
// loop can checkpoint after the current step and stop; a second one, or a
// first one the loop has not acted on within kSignalGraceSeconds (a step
// stuck in a library), ends the program at once.
#pragma once

namespace modelc::rt {

/// How long the step under way may take after the first signal.
constexpr unsigned kSignalGraceSeconds = 30;

/// Installs the handlers for its lifetime and restores the previous ones.
class SignalGuard {
public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard &) = delete;
  SignalGuard &operator=(const SignalGuard &) = delete;

  /// The signal received since construction, or 0.
  static int pending();
  /// The loop is acting on the pending signal: the grace timer stops (the
  /// checkpoint it writes now may take longer).
  static void acknowledge();
};

} // namespace modelc::rt
