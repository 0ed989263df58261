// client_watch: the serving loop holds the fabric while a client process runs (serve.h's
// settle rule), so it must tell a sleeping process from a running one.
#include <gtest/gtest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/umad/client_watch.h"

using namespace ibvp::umad;

namespace {

// A child that does nothing but `what`; killed and reaped when the test ends.
struct Child {
  pid_t pid;
  explicit Child(void (*what)()) : pid(::fork()) {
    if (pid == 0) {
      what();
      ::_exit(0);
    }
  }
  ~Child() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

void sleep_forever() {
  for (;;) ::pause();
}
void spin_forever() {
  for (volatile unsigned long i = 0;; i = i + 1) {}
}

// The child is sleeping once its state says so; a fork may take a moment to get there.
bool becomes_blocked(pid_t pid) {
  for (int i = 0; i < 2000; ++i) {
    if (process_blocked(static_cast<uint32_t>(pid))) return true;
    ::usleep(1000);
  }
  return false;
}

}  // namespace

TEST(ClientWatch, AProcessAsleepInASystemCallIsBlocked) {
  Child c(sleep_forever);
  EXPECT_TRUE(becomes_blocked(c.pid));
}

TEST(ClientWatch, AProcessThatComputesIsNotBlocked) {
  // A spinning process is running or runnable (R) whenever it is looked at.
  Child c(spin_forever);
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(process_blocked(static_cast<uint32_t>(c.pid)));
}

TEST(ClientWatch, AProcessThatIsGoneHoldsNothing) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  EXPECT_TRUE(process_blocked(static_cast<uint32_t>(pid)));
}
