// Internal: the TrainingInterrupted a loop (fit, evaluate, predict, PreemptionCheckpointHandler)
// stops with once Strategy::termination_request() asks it to.
#pragma once

#include <string>

#include "framework/core/error.h"
#include "framework/strategy/strategy.h"

namespace strata {

// "<who>: stopped by SIGTERM <where> (<advice>)"; under a multi-worker strategy the parentheses
// also name the task that received the signal and say that every worker stopped after the same
// step. Its signal() is this process's own signal when it received one (a signalled process
// exits 128 + its signal), else the one that stopped the job: every worker of a preempted job
// exits as a preempted task.
TrainingInterrupted termination_error(const char* who, const distribute::Strategy& strategy,
                                      const distribute::Strategy::TerminationRequest& request,
                                      const std::string& where, const std::string& advice);

}  // namespace strata
