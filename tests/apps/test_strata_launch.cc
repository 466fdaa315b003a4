// strata-launch's --max_restarts and --elastic_min_workers, with tests/apps/launch_task.sh as the
// program: failed workers started again (same TF_CONFIG, same output prefix) while restarts are
// left, an elastic job going on without a worker while enough training tasks run, the chief never
// restarted, and the flags' mistakes. The tasks wait for each other through files, not sleeps,
// so the outcomes hold under a busy CPU; the launcher's other behaviour is tested in
// apps/CMakeLists.txt (apps.strata_launch.*).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/apps/app_runner.h"
#include "tests/datasets/temp_dir.h"

namespace strata::apps_testing {
namespace {
using strata::testing::TempDir;

std::vector<std::string> launch(std::vector<std::string> flags, std::vector<std::string> task) {
  flags.insert(flags.begin(), STRATA_LAUNCH_BIN);
  flags.push_back("--");
  flags.push_back(STRATA_LAUNCH_TASK);
  flags.insert(flags.end(), task.begin(), task.end());
  return flags;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Lines of worker 1's TF_CONFIG (each run prints it first).
std::vector<std::string> worker_1_configs(const std::string& output) {
  std::vector<std::string> lines;
  for (size_t at = output.find("[worker 1] {"); at != std::string::npos;
       at = output.find("[worker 1] {", at + 1)) {
    lines.push_back(output.substr(at, output.find('\n', at) - at));
  }
  return lines;
}

TEST(StrataLaunch, FailedWorkerIsRestartedUntilItSucceeds) {
  TempDir tmp;
  // Worker 1 fails twice (SIGKILL, then status 3) and succeeds the third time; worker 0 (the
  // leader) waits for that.
  const AppResult r = run_app(launch({"--workers", "2", "--max_restarts", "2",
                                      "--elastic_min_workers", "1"},
                                     {"flaky", tmp.path().string(), "2"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(tmp.file("runs")), "run\nrun\nrun\n") << r.output;
  EXPECT_NE(r.output.find("[strata-launch] worker 1 was killed by signal 9 (SIGKILL); restarting "
                          "it (restart 1 of 2)"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[strata-launch] worker 1 exited with status 3; restarting it (restart "
                          "2 of 2)"),
            std::string::npos) << r.output;
  EXPECT_EQ(count(r.output, "[worker 1] worker 1 fails on purpose"), 1u) << r.output;
  // Every run of worker 1 had the same TF_CONFIG and its output the same prefix.
  const std::vector<std::string> configs = worker_1_configs(r.output);
  ASSERT_EQ(configs.size(), 3u) << r.output;
  EXPECT_EQ(configs[1], configs[0]);
  EXPECT_EQ(configs[2], configs[0]);
  EXPECT_NE(configs[0].find("\"index\":1"), std::string::npos) << configs[0];
}

TEST(StrataLaunch, WorkerThatKeepsFailingEndsTheJobOnceRestartsAreUsedUp) {
  TempDir tmp;
  const AppResult r = run_app(launch({"--workers", "2", "--max_restarts", "1"},
                                     {"flaky", tmp.path().string(), "1000"}));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(read_text(tmp.file("runs")), "run\nrun\n") << r.output;
  EXPECT_NE(r.output.find("[strata-launch] worker 1 exited with status 3; the job's restarts are "
                          "used up (1 of --max_restarts 1); stopping the other tasks"),
            std::string::npos) << r.output;
}

TEST(StrataLaunch, ElasticJobGoesOnWithoutAFailedWorker) {
  TempDir tmp;
  const std::string output = tmp.file("launch.txt");
  const std::string goes_on = "the job goes on without it";
  // The chief and worker 0 exit 0 once the launcher has said it goes on without worker 1.
  const AppResult r = wait_app(start_app(launch({"--chief", "--workers", "2",
                                                 "--elastic_min_workers", "2"},
                                                {"fail_then_wait", output, goes_on}),
                                         output),
                               output);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[strata-launch] worker 1 exited with status 3; the job goes on without "
                          "it: 2 training tasks still run, at least --elastic_min_workers 2"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("stopping the other tasks"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("gave up waiting"), std::string::npos) << r.output;
}

TEST(StrataLaunch, ElasticJobStopsWhenTooFewTrainingTasksRemain) {
  TempDir tmp;
  const std::string output = tmp.file("launch.txt");
  const AppResult r = wait_app(start_app(launch({"--chief", "--workers", "2",
                                                 "--elastic_min_workers", "3", "--max_restarts",
                                                 "5"},
                                                {"fail_then_wait", output, "never printed"}),
                                         output),
                               output);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("[strata-launch] worker 1 exited with status 3; 2 training tasks still "
                          "run, fewer than --elastic_min_workers 3; stopping the other tasks"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("restarting it"), std::string::npos) << r.output;
}

TEST(StrataLaunch, ChiefIsNeverRestarted) {
  // It hosts the coordination service: the job cannot outlive it.
  const AppResult r = run_app(launch({"--chief", "--workers", "2", "--max_restarts", "5",
                                      "--elastic_min_workers", "1"},
                                     {"fail_chief"}));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("[strata-launch] chief 0 exited with status 3; stopping the other tasks"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("restarting it"), std::string::npos) << r.output;
}

TEST(StrataLaunch, RestartAndElasticFlagMistakesAreFlagErrors) {
  const struct {
    std::vector<std::string> flags;
    std::string error;
  } cases[] = {
      {{"--max_restarts", "-1"},
       "error: --max_restarts: got '-1', expected a whole number from 0 to 1000000"},
      {{"--elastic_min_workers=-2"},
       "error: --elastic_min_workers: got '-2', expected a whole number from 0 to 1024"},
      {{"--chief", "--workers", "2", "--elastic_min_workers", "4"},
       "error: --elastic_min_workers 4 is more than the job's 3 training tasks (chief and "
       "workers), so it could never run: give at most 3, or more --workers"},
      {{"--workers", "1", "--max_restarts", "2"},
       "error: --max_restarts 2 has no task to restart: only workers are restarted, never the "
       "leader (worker 0 without --chief)"},
  };
  for (const auto& c : cases) {
    const AppResult r = run_app(launch(c.flags, {"serve"}));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(c.error), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("[worker 0]"), std::string::npos) << "a task started:\n" << r.output;
  }
}

}  // namespace
}  // namespace strata::apps_testing
