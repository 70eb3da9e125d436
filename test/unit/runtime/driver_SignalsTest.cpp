// Tests of SignalGuard (issue 13: a second SIGINT/SIGTERM ends the program
// at once), each in a child process so that the signals hit only it.
#include "runtime/driver/Signals.h"

#include <gtest/gtest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

namespace modelc::rt {
namespace {

/// Runs `body` in a child; its wait status.
template <typename Body> int inChild(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(SignalGuardTest, TheFirstSignalIsRecorded) {
  int status = inChild([] {
    SignalGuard guard;
    if (SignalGuard::pending() != 0)
      ::_exit(10);
    std::raise(SIGTERM);
    if (SignalGuard::pending() != SIGTERM)
      ::_exit(11);
    SignalGuard::acknowledge();
    ::_exit(0);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(SignalGuardTest, ASecondSignalEndsTheProcessAtOnce) {
  for (int sig : {SIGTERM, SIGINT}) {
    int status = inChild([sig] {
      SignalGuard guard;
      std::raise(sig);
      std::raise(sig); // must not return
      ::_exit(12);
    });
    ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
    EXPECT_EQ(WTERMSIG(status), sig);
  }
}

TEST(SignalGuardTest, ThePreviousHandlersComeBack) {
  int status = inChild([] {
    std::signal(SIGTERM, SIG_IGN);
    {
      SignalGuard guard;
      std::raise(SIGTERM);
      if (SignalGuard::pending() != SIGTERM)
        ::_exit(13);
    }
    if (SignalGuard::pending() != 0)
      ::_exit(14);
    std::raise(SIGTERM); // ignored again
    ::_exit(0);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

} // namespace
} // namespace modelc::rt
