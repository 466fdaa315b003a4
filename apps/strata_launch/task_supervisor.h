// Runs the planned tasks as child processes of strata-launch and watches them:
//  - each task's stdout and stderr lines come out on the launcher's, prefixed "[worker 1] ";
//  - SIGINT, SIGTERM and SIGHUP sent to the launcher go to every task;
//  - the first task that fails (non-zero exit, or killed by a signal) stops the others
//    (SIGTERM, then SIGKILL after the grace period), and its status is the launcher's; except
//    a worker, which is started again while restarts are left (max_restarts, torchrun's
//    --max-restarts), and which in an elastic job (elastic_min_workers) is let go while enough
//    training tasks still run;
//  - once every training task (chief, workers) has exited 0, the serving tasks (ps, evaluator)
//    are stopped the same way and the launcher exits 0.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "apps/strata_launch/launch_plan.h"

namespace launch {

struct SuperviseOptions {
  double grace_seconds = 10.0;  // SIGTERM .. SIGKILL
  // Restarts of failed workers, all of them together, over the job. Only workers: the leader
  // (the chief, else worker 0) hosts the coordination service, so the job cannot outlive it,
  // and a ps or evaluator failing ends the job as before.
  int max_restarts = 0;
  // > 0: the job is elastic (its program was started with the same --elastic_min_workers): a
  // worker that fails stops nothing while at least this many training tasks (chief, workers)
  // still run, the failed one not counted; fewer, and the job stops as for any failure.
  int elastic_min_workers = 0;
  // Set in every task's environment besides TF_CONFIG (an empty value unsets the variable): the
  // job's token and TLS files.
  std::vector<std::pair<std::string, std::string>> environment;
};

// Starts `program` (argv[0] looked up in PATH) once per task with TF_CONFIG set, and returns the
// exit status to report: 0, the first failing task's status (a worker's failures that were
// restarted or let go do not count), or 128 + signal for a task killed by a signal (or when the
// launcher itself was signalled). Throws strata::IOError when a task cannot be started at first.
int supervise(const std::vector<TaskPlan>& tasks, const std::vector<std::string>& program,
              const SuperviseOptions& options);

}  // namespace launch
