#include "framework/trainer/termination_error.h"

#include <signal.h>

#include "framework/trainer/termination_signals.h"

namespace strata {

TrainingInterrupted termination_error(const char* who, const distribute::Strategy& strategy,
                                      const distribute::Strategy::TerminationRequest& request,
                                      const std::string& where, const std::string& advice) {
  const int own = TerminationSignalScope::pending();
  std::string text = std::string(who) + ": stopped by " +
                     (request.signal == SIGINT ? "SIGINT" : "SIGTERM") + " " + where;
  // The apps cut the message at its first " (" when they replace the advice.
  if (strategy.num_workers() > 1 && !request.received_by.empty()) {
    text += " (" + request.received_by + " received it, and every worker of the job stopped " +
            "after this same step; " + advice + ")";
  } else {
    text += " (" + advice + ")";
  }
  return TrainingInterrupted(text, own != 0 ? own : request.signal);
}

}  // namespace strata
