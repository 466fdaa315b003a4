#include "framework/trainer/termination_signals.h"

#include <signal.h>

#include <mutex>

namespace strata {
namespace {

volatile sig_atomic_t g_pending = 0;
std::mutex g_mutex;  // guards the installation count and the saved handlers
int g_depth = 0;
struct sigaction g_old_term, g_old_int;

// Async-signal-safe: only the flag, signal() and raise().
void on_signal(int sig) {
  if (g_pending != 0) {  // asked again (either signal): stop now, as the default action
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_pending = sig;
}

}  // namespace

TerminationSignalScope::TerminationSignalScope() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_depth++ > 0) return;
  g_pending = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // Either signal waits while the handler runs for the other, so two arriving together are
  // seen one after the other (the second ends the process).
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGINT);
  sa.sa_flags = SA_RESTART;  // reads and writes in progress carry on
  sigaction(SIGTERM, &sa, &g_old_term);
  sigaction(SIGINT, &sa, &g_old_int);
}

TerminationSignalScope::~TerminationSignalScope() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (--g_depth > 0) return;
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGINT, &g_old_int, nullptr);
  g_pending = 0;
}

int TerminationSignalScope::pending() { return g_pending; }

}  // namespace strata
