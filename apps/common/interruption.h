// SIGTERM / SIGINT stop fit() with strata::TrainingInterrupted, after its callbacks saved what
// they save on preemption; main_guard.h prints it and exits with 128 + signal. The library
// cannot know whether anything was saved; the apps do: without --model_dir there is no backup,
// and a rerun starts from scratch. The message says so and how to make runs resumable.
#pragma once

#include <string>

#include <strata/strata.h>

namespace apps {

// Runs `fit` (a callable that calls Model::fit); `resumable`: the run keeps a backup
// (--model_dir given).
template <typename Fit>
void fit_explaining_interruption(bool resumable, Fit&& fit) {
  try {
    fit();
  } catch (const strata::TrainingInterrupted& e) {
    if (resumable) throw;
    // The library's first words say when it stopped ("Model.fit: stopped by SIGTERM after
    // epoch 2, batch 31"); its advice in parentheses is what this replaces.
    const std::string what = e.what();
    throw strata::TrainingInterrupted(
        what.substr(0, what.find(" (")) +
            ". Nothing was saved: this run has no --model_dir, so running it again starts from "
            "scratch. To make runs resumable, pass --model_dir DIR: the run keeps a backup there "
            "and the same command resumes from it after a kill or preemption.",
        e.signal());
  }
}

}  // namespace apps
