// The signal handlers behind SignalGuard (see Signals.h).
#include "runtime/driver/Signals.h"

#include <csignal>
#include <cstring>
#include <unistd.h>

namespace modelc::rt {

namespace {

volatile std::sig_atomic_t pendingSignal = 0;
struct sigaction previousInt, previousTerm, previousAlarm;

void recordSignal(int sig) {
  if (pendingSignal != 0) {
    // A second signal: stop now, as the default action would.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  pendingSignal = sig;
  ::alarm(kSignalGraceSeconds);
}

void graceOver(int) {
  const char msg[] = "stopped: the step under way did not end within the "
                     "grace period after the signal; exiting without a "
                     "checkpoint\n";
  (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
  int sig = pendingSignal ? int(pendingSignal) : SIGTERM;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
  ::_exit(128 + sig);
}

} // namespace

SignalGuard::SignalGuard() {
  pendingSignal = 0;
  struct sigaction action = {};
  action.sa_handler = recordSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previousInt);
  sigaction(SIGTERM, &action, &previousTerm);
  struct sigaction alarmAction = {};
  alarmAction.sa_handler = graceOver;
  sigemptyset(&alarmAction.sa_mask);
  sigaction(SIGALRM, &alarmAction, &previousAlarm);
}

SignalGuard::~SignalGuard() {
  ::alarm(0);
  sigaction(SIGINT, &previousInt, nullptr);
  sigaction(SIGTERM, &previousTerm, nullptr);
  sigaction(SIGALRM, &previousAlarm, nullptr);
  pendingSignal = 0;
}

int SignalGuard::pending() { return pendingSignal; }

void SignalGuard::acknowledge() { ::alarm(0); }

} // namespace modelc::rt
