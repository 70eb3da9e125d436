// The signal handlers behind SignalGuard (see Signals.h).
#include "runtime/driver/Signals.h"

#include <csignal>

namespace modelc::rt {

namespace {

volatile std::sig_atomic_t pendingSignal = 0;
struct sigaction previousInt, previousTerm;

void recordSignal(int sig) {
  if (pendingSignal != 0) {
    // A second signal: stop now, as the default action would.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  pendingSignal = sig;
}

} // namespace

SignalGuard::SignalGuard() {
  pendingSignal = 0;
  struct sigaction action = {};
  action.sa_handler = recordSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previousInt);
  sigaction(SIGTERM, &action, &previousTerm);
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &previousInt, nullptr);
  sigaction(SIGTERM, &previousTerm, nullptr);
  pendingSignal = 0;
}

int SignalGuard::pending() { return pendingSignal; }

} // namespace modelc::rt
