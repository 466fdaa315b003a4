// Internal: SIGTERM / SIGINT during fit(). A cluster scheduler preempts a job with SIGTERM (and
// SIGKILL a grace period later); a user stops one with Ctrl-C. While a TerminationSignalScope
// is alive those signals only set a flag, which the training loop checks after each step so it
// can finish the step, let callbacks save, and stop cleanly. Under a multi-worker strategy the
// flag is not acted on alone: it travels to every worker with the step's state all-gather
// (Strategy::termination_request), so all stop after the same step.
//
// A second SIGTERM or SIGINT while one is pending (an impatient user, a scheduler whose grace
// period is over, strata-launch passing a second signal on) terminates the process at once, as
// the default action of that signal would; SIGKILL always does.
#pragma once

namespace strata {

class TerminationSignalScope {
 public:
  TerminationSignalScope();   // installs the handlers (nested scopes share them)
  ~TerminationSignalScope();  // restores the previous handlers when the outermost scope ends
  TerminationSignalScope(const TerminationSignalScope&) = delete;
  TerminationSignalScope& operator=(const TerminationSignalScope&) = delete;

  // The signal this process received since the outermost scope began (SIGTERM or SIGINT; the
  // first one), or 0. Always 0 while no scope is alive.
  static int pending();
};

}  // namespace strata
