// strata-launch: starts the tasks of a multi-process job on this machine, each with its
// TF_CONFIG, as a cluster manager would on several (Kubeflow's TFJob, Slurm):
//
//   strata-launch --workers 2 -- build/apps/mnist/mnist --distribution_strategy
// multi_worker_mirrored
//   strata-launch --workers 2 --ps 1 --chief -- build/apps/resnet_cifar/resnet_cifar ...
//
// Ports are free ones the system picks (or --port_base, --port_base + 1, ...); each task's output
// lines come out prefixed with the task ("[worker 1] ..."); signals to the launcher go to every
// task; the first task that fails stops the others and its exit status is the launcher's.
// --max_restarts and --elastic_min_workers (torchrun's --max-restarts and --nnodes MIN:MAX) let
// failed workers be started again, and the job go on without them (task_supervisor.h).
//
// Each job gets a fresh token (distribute/cluster/job_security.h), a random file only this user can
// read, removed at exit, handed to every task as STRATA_JOB_TOKEN_FILE: no process outside the
// job can call its servers. --job_token_file gives one instead, --nojob_token runs without;
// --tls_cert_file, --tls_key_file, --tls_ca_file and --bind_host reach every task likewise.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <absl/flags/flag.h>

#include "apps/common/flags.h"
#include "apps/common/job_security_flags.h"
#include "apps/common/main_guard.h"
#include "apps/strata_launch/job_token_file.h"
#include "apps/strata_launch/launch_plan.h"
#include "apps/strata_launch/task_supervisor.h"

using CountFlag = apps::Ranged<int, 0, 1024>;
using PortFlag = apps::Ranged<int, 0, 65535>;
using SecondsFlag = apps::Ranged<int, 0, 3600>;
using RestartsFlag = apps::Ranged<int, 0, 1000000>;

ABSL_FLAG(CountFlag, workers, 1, "Worker tasks to start.");
ABSL_FLAG(CountFlag, ps, 0,
          "Parameter-server tasks to start (stopped once the training tasks finish).");
ABSL_FLAG(bool, chief, false, "Also start a chief task (otherwise worker 0 leads).");
ABSL_FLAG(std::string, chief_name, "chief",
          "The chief's task type in TF_CONFIG: chief, or master (TensorFlow's legacy name, which "
          "some cloud platforms set).");
ABSL_FLAG(bool, evaluator, false,
          "Also start an evaluator task (stopped once the training tasks finish).");
ABSL_FLAG(std::string, host, "localhost", "The host name every task's address uses.");
ABSL_FLAG(PortFlag, port_base, 0,
          "First port of the tasks' addresses (the next tasks take the next ports); 0 picks "
          "free ports.");
ABSL_FLAG(std::string, rpc_layer, "", "rpc_layer to put in TF_CONFIG (e.g. grpc); empty: none.");
ABSL_FLAG(SecondsFlag, grace_seconds, 10,
          "Seconds the tasks get to stop after SIGTERM before SIGKILL.");
ABSL_FLAG(RestartsFlag, max_restarts, 0,
          "Times, over the whole job, a worker task that fails (non-zero exit, or killed by a "
          "signal) is started again with the same command and TF_CONFIG (torchrun's "
          "--max-restarts). Never the chief, nor worker 0 without --chief: that task hosts the "
          "coordination service, and its failure ends the job. Without --elastic_min_workers "
          "the program must take a worker back by itself (be elastic). 0: none.");
ABSL_FLAG(CountFlag, elastic_min_workers, 0,
          "Elastic job: a worker that fails stops nothing while at least this many training "
          "tasks (chief and workers) still run; it is restarted while --max_restarts allow. "
          "Start the program with the same --elastic_min_workers (strata-launch only manages the "
          "processes). 0: not elastic, a failure that is not restarted ends the job.");
ABSL_FLAG(bool, job_token, true,
          "Give the job a fresh random token (a 0600 file in a temporary folder, removed at "
          "exit) unless --job_token_file or STRATA_JOB_TOKEN_FILE names one; --nojob_token: "
          "none, any process that reaches a task's port may call it.");

int main(int argc, char** argv) {
  return apps::guarded_main([&] {
    // Flags before "--", the program and its arguments after.
    int split = argc;
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--") {
        split = i;
        break;
      }
    }
    apps::parse_command_line(split, argv,
                             "Starts the tasks of a multi-process job on this machine: "
                             "strata-launch --workers N [--ps M] [--chief] [--max_restarts R] "
                             "[--elastic_min_workers M] -- PROGRAM ARGS...");
    std::vector<std::string> program(argv + std::min(split + 1, argc), argv + argc);
    if (program.empty()) {
      throw apps::FlagError("no program to launch: put it after '--', e.g. strata-launch "
                            "--workers 2 -- build/apps/mnist/mnist --distribution_strategy "
                            "multi_worker_mirrored");
    }
    launch::PlanOptions plan;
    plan.workers = absl::GetFlag(FLAGS_workers).value;
    plan.ps = absl::GetFlag(FLAGS_ps).value;
    plan.chief = absl::GetFlag(FLAGS_chief);
    plan.chief_name = absl::GetFlag(FLAGS_chief_name);
    if (plan.chief_name != "chief" && plan.chief_name != "master") {
      throw apps::FlagError("--chief_name must be chief or master, got '" + plan.chief_name + "'");
    }
    plan.evaluator = absl::GetFlag(FLAGS_evaluator);
    plan.host = absl::GetFlag(FLAGS_host);
    plan.port_base = absl::GetFlag(FLAGS_port_base).value;
    plan.rpc_layer = absl::GetFlag(FLAGS_rpc_layer);
    if (plan.workers == 0 && !plan.chief) {
      throw apps::FlagError("--workers 0 without --chief leaves no task to train");
    }
    const std::vector<launch::TaskPlan> tasks = launch::make_plan(plan);
    if (plan.port_base > 0 && plan.port_base + int(tasks.size()) - 1 > 65535) {
      throw apps::FlagError("--port_base " + std::to_string(plan.port_base) + " leaves no room for " +
                            std::to_string(tasks.size()) + " tasks below port 65536");
    }
    launch::SuperviseOptions options;
    options.grace_seconds = absl::GetFlag(FLAGS_grace_seconds).value;
    options.max_restarts = absl::GetFlag(FLAGS_max_restarts).value;
    options.elastic_min_workers = absl::GetFlag(FLAGS_elastic_min_workers).value;
    const int training = plan.workers + (plan.chief ? 1 : 0);
    if (options.elastic_min_workers > training) {
      throw apps::FlagError("--elastic_min_workers " + std::to_string(options.elastic_min_workers) +
                            " is more than the job's " + std::to_string(training) +
                            " training tasks (chief and workers), so it could never run: give "
                            "at most " + std::to_string(training) + ", or more --workers");
    }
    // The leader (the chief, else worker 0) is never restarted: some other worker must be.
    if (options.max_restarts > 0 && training < 2) {
      throw apps::FlagError("--max_restarts " + std::to_string(options.max_restarts) +
                            " has no task to restart: only workers are restarted, never the " +
                            (plan.chief ? "chief" : "leader (worker 0 without --chief)") +
                            ", which hosts the coordination service; add --workers, or drop "
                            "--max_restarts");
    }
    // The job's token and TLS files, checked here once rather than by every task.
    namespace distribute = strata::distribute;
    distribute::JobSecurity security = apps::job_security_from_flags();
    std::unique_ptr<launch::JobTokenFile> token;
    if (security.token_file.empty() && absl::GetFlag(FLAGS_job_token)) {
      token = std::make_unique<launch::JobTokenFile>();
      security.token_file = token->path();
    }
    try {
      distribute::set_job_security(security);
    } catch (const strata::ValueError& e) {
      throw apps::FlagError(e.what());
    }
    options.environment = {{distribute::kJobTokenFileEnv, security.token_file},
                           {distribute::kTlsCertFileEnv, security.tls_cert_file},
                           {distribute::kTlsKeyFileEnv, security.tls_key_file},
                           {distribute::kTlsCaFileEnv, security.tls_ca_file},
                           {distribute::kBindHostEnv, security.bind_host}};
    return launch::supervise(tasks, program, options);
  });
}
