// SIGTERM / SIGINT stop fit() with strata::TrainingInterrupted, after its callbacks saved what
// they save on preemption; the app prints why and exits with 128 + signal (main_guard.h). The
// library cannot know whether anything was saved; the apps do: without --model_dir there is no
// backup, and a rerun starts from scratch. The message says so and how to make runs resumable.
//
// The message is printed here, at once, not by guarded_main: the strategy (a local of the app's
// body) still has to leave the job, and in a multi-worker job every task waits there for the
// others, the chief's backup included. Once they have all left, a launcher may end the tasks
// still exiting (strata-launch stops the others when one task exits): what they had to say is
// out by then.
#pragma once

#include <iostream>
#include <string>

#include <strata/strata.h>

#include "apps/common/main_guard.h"

namespace apps {

// Runs `fit` (a callable that calls Model::fit); `resumable`: the run keeps a backup
// (--model_dir given). Throws ReportedInterruption when a signal stopped it.
template <typename Fit>
void fit_explaining_interruption(bool resumable, Fit&& fit) {
  try {
    fit();
  } catch (const strata::TrainingInterrupted& e) {
    std::string message = e.what();
    if (!resumable) {
      // The library's first words say when it stopped ("Model.fit: stopped by SIGTERM after
      // epoch 2, batch 31"); its advice in parentheses is what this replaces.
      message = message.substr(0, message.find(" (")) +
                ". Nothing was saved: this run has no --model_dir, so running it again starts "
                "from scratch. To make runs resumable, pass --model_dir DIR: the run keeps a "
                "backup there and the same command resumes from it after a kill or preemption.";
    }
    std::cerr << message << std::endl;
    throw ReportedInterruption{e.signal()};
  }
}

}  // namespace apps
