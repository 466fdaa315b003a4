// Internal: SIGTERM / SIGINT during fit(). A cluster scheduler preempts a job with SIGTERM (and
// SIGKILL a grace period later); a user stops one with Ctrl-C. While a TerminationSignalScope
// is alive those signals only set a flag, which the training loop checks after each step so it
// can finish the step, let callbacks save, and stop cleanly. A second signal of the same kind
// while the flag is still pending terminates the process as the default action would.
#pragma once

namespace strata {

class TerminationSignalScope {
 public:
  TerminationSignalScope();   // installs the handlers (nested scopes share them)
  ~TerminationSignalScope();  // restores the previous handlers when the outermost scope ends
  TerminationSignalScope(const TerminationSignalScope&) = delete;
  TerminationSignalScope& operator=(const TerminationSignalScope&) = delete;

  // The signal received since the scope began (SIGTERM or SIGINT), or 0.
  static int pending();
};

}  // namespace strata
