// What the apps do with --distribution_strategy parameter_server: every task of the job runs the
// same command, and TF_CONFIG says which part it plays (TensorFlow's "the same image and entry
// point; branch on TF_CONFIG"): a ps or worker task serves until the coordinator ends the job,
// an evaluator evaluates checkpoints (its TF_CONFIG needs no cluster: is_evaluator_task), and the
// chief (or master; without either, worker 0, which also serves as a worker) trains with
// ParameterServerStrategy and fit(DatasetCreator).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <strata/strata.h>

#include "apps/common/flag_error.h"
#include "apps/common/strategy_setup.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/ps_roles.h"
#include "distribute/parameter_server/server.h"
#include "distribute/parameter_server/sidecar_evaluator.h"

namespace apps {

struct ParameterServerTask {
  strata::distribute::ParameterServerRole role;
  strata::distribute::ClusterSpec cluster;
  // Worker 0 coordinating (no chief in the cluster) serves as worker 0 as well.
  std::unique_ptr<strata::distribute::Server> own_worker;

  bool coordinates() const {
    return role.kind == strata::distribute::ParameterServerRole::Kind::kCoordinator;
  }
  bool evaluates() const {
    return role.kind == strata::distribute::ParameterServerRole::Kind::kEvaluator;
  }
  bool serves() const { return !coordinates() && !evaluates(); }
  // ps / worker: serves until the coordinator ends the job (shutdown_cluster): 0. A worker
  // preempted (SIGTERM / SIGINT) finishes the closure it runs, takes no more (the coordinator
  // re-queues them) and ends: 128 + the signal, the status main() returns.
  int serve() const {
    const int signal =
        strata::distribute::Server(cluster, role.task_type, role.task_index).join();
    if (signal != 0) {
      std::printf("%s %d: preempted (signal %d)\n", role.task_type.c_str(), role.task_index,
                  signal);
      return 128 + signal;
    }
    std::printf("%s %d: the coordinator ended the job\n", role.task_type.c_str(), role.task_index);
    return 0;
  }
  // The coordinator's strategy (variables round-robin over the ps tasks).
  std::shared_ptr<strata::distribute::ParameterServerStrategy> strategy() const {
    return std::make_shared<strata::distribute::ParameterServerStrategy>(cluster);
  }
};

// This task's part, from TF_CONFIG, printed. Register the app's dataset functions before: a
// worker serves them from the moment it starts. The evaluator reads the checkpoints the chief
// writes under --model_dir (`model_dir`): FlagError without it.
inline ParameterServerTask parameter_server_task(const std::string& model_dir) {
  const char* tf_config = std::getenv("TF_CONFIG");
  if (tf_config == nullptr || *tf_config == '\0') {
    throw FlagError("--distribution_strategy=parameter_server needs TF_CONFIG on every task "
                    "(a cluster with \"ps\" and \"worker\" jobs, optionally a \"chief\", and this "
                    "task's type and index); strata-launch --workers 2 --ps 2 --chief -- <app> "
                    "sets it for a job on this machine");
  }
  strata::distribute::TFConfigClusterResolver resolver;
  ParameterServerTask task;
  task.role = strata::distribute::parameter_server_role(resolver);
  task.cluster = resolver.cluster_spec();
  std::printf("Parameter-server job: %s\n", task.role.describe().c_str());
  std::fflush(stdout);
  if (task.evaluates()) check_evaluator_model_dir(model_dir);
  if (task.role.also_worker) {
    task.own_worker = std::make_unique<strata::distribute::Server>(task.cluster, "worker", 0);
  }
  return task;
}

// The evaluator task: each checkpoint the chief's ModelCheckpoint writes to `checkpoint_dir`,
// evaluated once, up to `max_evaluations`; summaries under `log_dir`.
inline int evaluate_checkpoints(std::shared_ptr<strata::Model> model, strata::data::Dataset data,
                                const std::string& checkpoint_dir, int64_t steps,
                                int64_t max_evaluations, const std::string& log_dir) {
  strata::distribute::SidecarEvaluatorOptions options;
  options.steps(steps).max_evaluations(max_evaluations).log_dir(log_dir).timeout_seconds(3600);
  const auto history =
      strata::distribute::SidecarEvaluator(std::move(model), std::move(data), checkpoint_dir,
                                           options)
          .start();
  std::printf("Evaluator: evaluated %zu checkpoint(s)\n", history.size());
  return 0;
}

// The chief's last act under parameter servers: the ps and worker tasks' servers return. Nothing
// for other strategies.
inline void end_parameter_server_job(strata::distribute::Strategy* strategy) {
  if (auto* ps = dynamic_cast<strata::distribute::ParameterServerStrategy*>(strategy)) {
    ps->shutdown_cluster();
  }
}

// Runs `fit`; a chief stopped by SIGTERM / SIGINT (fit stopped at a step boundary and its
// callbacks saved the backup) ends the job before it exits with 128 + signal, so the ps and
// worker tasks end too and the whole job can be restarted, resuming from the backup.
template <typename Fit>
void fit_ending_job_if_interrupted(strata::distribute::Strategy* strategy, Fit&& fit) {
  try {
    fit();
  } catch (const strata::TrainingInterrupted&) {
    end_parameter_server_job(strategy);
    throw;
  }
}

}  // namespace apps
