#include "distribute/preemption_checkpoint_handler.h"

#include "framework/trainer/termination_error.h"
#include "framework/trainer/termination_signals.h"

namespace strata::distribute {

PreemptionCheckpointHandler::PreemptionCheckpointHandler(Strategy& strategy,
                                                         std::function<void()> save)
    : strategy_(strategy),
      save_(std::move(save)),
      signals_(std::make_unique<TerminationSignalScope>()) {}

PreemptionCheckpointHandler::~PreemptionCheckpointHandler() = default;

void PreemptionCheckpointHandler::run(const std::function<void()>& distributed_step) {
  distributed_step();
  ++runs_;
  const Strategy::TerminationRequest request = strategy_.termination_request();
  if (!request) return;
  strategy_.join();
  if (save_) save_();
  throw termination_error(
      "PreemptionCheckpointHandler", strategy_, request,
      "after run " + std::to_string(runs_),
      save_ ? (strategy_.num_workers() > 1 ? "every worker called the save function; start "
                                             "every worker again to resume"
                                           : "the save function was called; run again to resume")
            : "no save function: nothing was saved");
}

Strategy::TerminationRequest PreemptionCheckpointHandler::termination_request() const {
  return strategy_.termination_request();
}

}  // namespace strata::distribute
