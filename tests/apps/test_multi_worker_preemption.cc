// The apps under MultiWorkerMirroredStrategy with --model_dir, started by strata-launch as a
// user would: SIGTERM to the launcher (which passes it on to every task) stops every worker
// after the same step, the chief writes the backup, every task exits 143 (the launcher too),
// and the same command started again resumes there. The signal goes once a step (resnet_cifar)
// or an epoch (mnist) is reported; the runs are long enough that it lands while they train.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.h>

#include "tests/apps/app_runner.h"
#include "tests/datasets/temp_dir.h"

namespace strata::apps_testing {
namespace {
namespace fs = std::filesystem;
using strata::testing::TempDir;

// Waits (bounded) until the output holds `what`.
bool wait_for_output(const std::string& path, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (read_text(path).find(what) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// "after epoch E, batch B" of each worker's "Model.fit: stopped by SIGTERM ..." line; checks that
// both workers stopped at the same step and say so.
std::smatch stopped_at(const std::string& output) {
  const std::regex line(R"(\[worker (\d)\] Model\.fit: stopped by SIGTERM after epoch (\d+), batch (\d+))");
  std::vector<std::smatch> found;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line); it != std::sregex_iterator(); ++it) {
    found.push_back(*it);
  }
  EXPECT_EQ(found.size(), 2u) << "one line per worker:\n" << output;
  if (found.size() != 2) return {};
  EXPECT_NE(found[0][1].str(), found[1][1].str()) << output;
  EXPECT_EQ(found[0][2].str() + ":" + found[0][3].str(), found[1][2].str() + ":" + found[1][3].str())
      << "the workers stopped at different steps:\n" << output;
  return found[0];
}

void expect_clean_stop(const AppResult& r, const fs::path& model_dir) {
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.output;
  EXPECT_NE(r.output.find("[strata-launch] received Terminated; passing it to every task"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("sending SIGKILL"), std::string::npos) << "a task outlived the grace period:\n" << r.output;
  EXPECT_EQ(r.output.find("error:"), std::string::npos) << r.output;
  for (const char* worker : {"[worker 0] ", "[worker 1] "}) {
    EXPECT_NE(r.output.find(std::string(worker) + "Model.fit: stopped by SIGTERM after epoch "),
              std::string::npos) << r.output;
  }
  EXPECT_NE(r.output.find("received it, and every worker of the job stopped after this same step"),
            std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(model_dir / "backup" / "backup.h5")) << "the chief's backup";
  for (const auto& entry : fs::directory_iterator(model_dir / "backup")) {
    EXPECT_EQ(entry.path().filename().string().rfind("workertemp", 0), std::string::npos)
        << entry.path() << " was left behind";
  }
}

std::vector<std::string> launch(std::vector<std::string> app) {
  std::vector<std::string> args{STRATA_LAUNCH_BIN, "--workers", "2", "--"};
  args.insert(args.end(), app.begin(), app.end());
  return args;
}

std::vector<std::string> resnet_job(const fs::path& model_dir, int64_t train_steps) {
  return launch({STRATA_RESNET_CIFAR_BIN, "--distribution_strategy=multi_worker_mirrored",
                 "--use_synthetic_data", "--resnet_size=20", "--batch_size=4",
                 "--train_steps=" + std::to_string(train_steps), "--skip_eval", "--log_steps=1",
                 "--model_dir=" + model_dir.string()});
}

TEST(AppMultiWorkerPreemption, ResnetCifarSigtermToTheLauncherSavesAndTheRerunResumes) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  const std::string output = (tmp.path() / "launch.txt").string();
  const pid_t launcher = start_app(resnet_job(dir, 100000), output);
  ASSERT_TRUE(wait_for_output(output, "[worker 1] TimeHistory:")) << read_text(output);
  ::kill(launcher, SIGTERM);
  const AppResult stopped = wait_app(launcher, output);
  expect_clean_stop(stopped, dir);
  const std::smatch at = stopped_at(stopped.output);
  ASSERT_FALSE(at.empty());
  ASSERT_EQ(at[2].str(), "1");
  const int64_t batch = std::stoll(at[3].str());

  // The same job again, told to end two steps later: both workers resume at that step.
  const AppResult rerun = run_app(resnet_job(dir, batch + 2));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  for (const char* worker : {"[worker 0] ", "[worker 1] "}) {
    EXPECT_NE(rerun.output.find(std::string(worker) + "BackupAndRestore: resuming from " +
                                (dir / "backup" / "backup.h5").string() + " at epoch 1, batch " +
                                std::to_string(batch)),
              std::string::npos) << rerun.output;
  }
  EXPECT_NE(rerun.output.find("[worker 0] Trained 2 steps"), std::string::npos) << rerun.output;
  EXPECT_TRUE(fs::exists(dir / "model.h5"));
}

// The pid of the launcher's worker task `index` (its TF_CONFIG's task), or -1.
pid_t worker_pid(pid_t launcher, int index) {
  const std::regex task("TF_CONFIG=.*\"task\": ?\\{[^}]*\"index\": ?" + std::to_string(index) + "\\b");
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_text((entry.path() / "stat").string());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    int parent = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %*c %d", &parent) != 1 || parent != launcher) continue;
    std::string environ = read_text((entry.path() / "environ").string());
    for (char& c : environ) c = c == '\0' ? '\n' : c;
    if (std::regex_search(environ, task)) return pid_t(std::stoi(name));
  }
  return -1;
}

TEST(AppMultiWorkerPreemption, ResnetCifarSigtermToOneWorkerStopsTheJobAndTheRerunResumes) {
  // As Kubernetes evicting one pod: only worker 1 gets SIGTERM. Its flag reaches the chief with
  // the next step's all-gather; both stop there, the chief saves, both exit 143.
  TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  const std::string output = (tmp.path() / "launch.txt").string();
  const pid_t launcher = start_app(resnet_job(dir, 100000), output);
  ASSERT_TRUE(wait_for_output(output, "[worker 1] TimeHistory:")) << read_text(output);
  const pid_t worker1 = worker_pid(launcher, 1);
  ASSERT_GT(worker1, 0) << "worker 1 not found among the launcher's children";
  ::kill(worker1, SIGTERM);
  const AppResult stopped = wait_app(launcher, output);
  EXPECT_EQ(stopped.exit_code, 128 + SIGTERM) << stopped.output;
  EXPECT_EQ(stopped.output.find("sending SIGKILL"), std::string::npos) << stopped.output;
  EXPECT_EQ(stopped.output.find("error:"), std::string::npos) << stopped.output;
  EXPECT_NE(stopped.output.find("worker 1 (localhost:"), std::string::npos) << stopped.output;
  EXPECT_TRUE(fs::exists(dir / "backup" / "backup.h5")) << "the chief's backup";
  const std::smatch at = stopped_at(stopped.output);
  ASSERT_FALSE(at.empty());
  const int64_t batch = std::stoll(at[3].str());
  const AppResult rerun = run_app(resnet_job(dir, batch + 1));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  EXPECT_NE(rerun.output.find("[worker 0] BackupAndRestore: resuming from " +
                              (dir / "backup" / "backup.h5").string() + " at epoch 1, batch " +
                              std::to_string(batch)),
            std::string::npos) << rerun.output;
  EXPECT_NE(rerun.output.find("[worker 0] Trained 1 steps"), std::string::npos) << rerun.output;
}

// A small MNIST in IDX files (the real one need not be installed): labels i % 10.
void write_fake_mnist(const fs::path& dir) {
  fs::create_directories(dir);
  const auto images = [](int64_t n, size_t offset) {
    std::vector<uint8_t> v(size_t(n * 28 * 28));
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t((i * 7 + offset) % 251);
    return Tensor::from_vector(v, {n, 28, 28});
  };
  const auto labels = [](int64_t n) {
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(i % 10);
    return Tensor::from_vector(v);
  };
  data::write_idx((dir / "train-images-idx3-ubyte").string(), images(200, 0));
  data::write_idx((dir / "train-labels-idx1-ubyte").string(), labels(200));
  data::write_idx((dir / "t10k-images-idx3-ubyte").string(), images(40, 3));
  data::write_idx((dir / "t10k-labels-idx1-ubyte").string(), labels(40));
}

std::vector<std::string> mnist_job(const fs::path& data, const fs::path& model_dir, int epochs) {
  return launch({STRATA_MNIST_BIN, "--distribution_strategy=multi_worker_mirrored",
                 "--model=convnet", "--data_dir=" + data.string(), "--batch_size=8",
                 "--steps_per_epoch=4", "--epochs=" + std::to_string(epochs), "--verbose=2",
                 "--model_dir=" + model_dir.string()});
}

TEST(AppMultiWorkerPreemption, MnistSigtermToTheLauncherSavesAndTheRerunResumes) {
  TempDir tmp;
  const fs::path data = tmp.path() / "mnist", dir = tmp.path() / "run";
  write_fake_mnist(data);
  const std::string output = (tmp.path() / "launch.txt").string();
  const pid_t launcher = start_app(mnist_job(data, dir, 100000), output);
  // Once worker 1 trained an epoch (the progress bar starts the next one).
  ASSERT_TRUE(wait_for_output(output, "[worker 1] Epoch 2/100000")) << read_text(output);
  ::kill(launcher, SIGTERM);
  const AppResult stopped = wait_app(launcher, output);
  expect_clean_stop(stopped, dir);
  const std::smatch at = stopped_at(stopped.output);
  ASSERT_FALSE(at.empty());
  const int epoch = std::stoi(at[2].str());
  const std::string batch = at[3].str();

  // The same job again, told to end with the epoch it stopped in: it resumes there.
  const AppResult rerun = run_app(mnist_job(data, dir, epoch));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  for (const char* worker : {"[worker 0] ", "[worker 1] "}) {
    EXPECT_NE(rerun.output.find(std::string(worker) + "BackupAndRestore: resuming from " +
                                (dir / "backup" / "backup.h5").string() + " at epoch " +
                                std::to_string(epoch) + ", batch " + batch),
              std::string::npos) << rerun.output;
  }
  EXPECT_NE(rerun.output.find("[worker 0] saved " + (dir / "model.h5").string()), std::string::npos)
      << rerun.output;
}

}  // namespace
}  // namespace strata::apps_testing
