// The Keras tutorial's side-car evaluator in the apps: "The cluster part in the evaluator's
// TF_CONFIG is optional". A tiny run writes checkpoints to --model_dir; then the evaluator, started
// with each form of its TF_CONFIG (the whole cluster, only itself, no cluster) under
// --distribution_strategy parameter_server and multi_worker_mirrored, evaluates them and exits 0.
// (Before: parameter_server answered that the cluster has no 'ps' job; multi_worker_mirrored
// refused the evaluator in a cluster, and without one trained as a single worker.)
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/apps/app_runner.h"
#include "tests/apps/cifar_files.h"
#include "tests/datasets/temp_dir.h"

namespace strata::apps_testing {
namespace {
namespace fs = std::filesystem;
using strata::testing::TempDir;

const std::vector<std::string>& evaluator_tf_configs() {
  static const std::vector<std::string> forms{
      R"({"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],)"
      R"( "ps": ["host3:2222"], "evaluator": ["host7:2222"]}, "task": {"type": "evaluator", "index": 0}})",
      R"({"cluster": {"evaluator": ["host7:2222"]}, "task": {"type": "evaluator", "index": 0}})",
      R"({"task": {"type": "evaluator", "index": 0}})"};
  return forms;
}

// resnet_cifar on a CIFAR-10 folder of 20 training and 4 test images, one epoch of 2 steps.
std::vector<std::string> resnet_args(const std::string& data, const fs::path& model_dir,
                                     const std::string& strategy) {
  return {STRATA_RESNET_CIFAR_BIN, "--data_dir=" + data, "--batch_size=4", "--train_steps=2",
          "--distribution_strategy=" + strategy, "--model_dir=" + model_dir.string()};
}

// The chief's checkpoints: a run without TF_CONFIG writes model.ckpt-0001.h5 as a job's chief
// would.
void train(const std::string& data, const fs::path& model_dir) {
  const AppResult r = run_app(resnet_args(data, model_dir, "off"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(model_dir / "model.ckpt-0001.h5")) << r.output;
}

void expect_evaluates_every_form(const std::string& strategy) {
  TempDir tmp;
  const std::string data = write_cifar_dir(tmp.path() / "cifar", 4, 4);
  const fs::path model_dir = tmp.path() / "run";
  ASSERT_NO_FATAL_FAILURE(train(data, model_dir));
  for (const std::string& tf_config : evaluator_tf_configs()) {
    SCOPED_TRACE(strategy + " with TF_CONFIG " + tf_config);
    const AppResult r = run_app(resnet_args(data, model_dir, strategy), {"TF_CONFIG=" + tf_config});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("SidecarEvaluator: evaluated '" + (model_dir / "model.ckpt-0001.h5").string()),
              std::string::npos) << r.output;
    EXPECT_NE(r.output.find("Evaluator: evaluated 1 checkpoint(s)"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("Training "), std::string::npos) << "the evaluator trains nothing:\n"
                                                             << r.output;
  }
}

TEST(AppSidecarEvaluator, ParameterServerRunsEveryTutorialEvaluatorTfConfig) {
  expect_evaluates_every_form("parameter_server");
}

TEST(AppSidecarEvaluator, MultiWorkerMirroredRunsEveryTutorialEvaluatorTfConfig) {
  expect_evaluates_every_form("multi_worker_mirrored");
}

// Without --model_dir there is nothing to evaluate: a flag error (status 2) saying so.
TEST(AppSidecarEvaluator, NeedsModelDir) {
  for (const char* strategy : {"parameter_server", "multi_worker_mirrored"}) {
    SCOPED_TRACE(strategy);
    const AppResult r =
        run_app({STRATA_RESNET_CIFAR_BIN, "--use_synthetic_data", "--train_steps=1",
                 std::string("--distribution_strategy=") + strategy},
                {R"(TF_CONFIG={"task": {"type": "evaluator", "index": 0}})"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("the evaluator task evaluates the checkpoints the chief writes to "
                            "--model_dir"),
              std::string::npos) << r.output;
  }
}

// An evaluator's TF_CONFIG is still checked: a second evaluator is an error naming it.
TEST(AppSidecarEvaluator, InvalidEvaluatorTfConfigIsAnError) {
  TempDir tmp;
  for (const char* strategy : {"parameter_server", "multi_worker_mirrored"}) {
    SCOPED_TRACE(strategy);
    const AppResult r = run_app(
        {STRATA_RESNET_CIFAR_BIN, "--use_synthetic_data", "--train_steps=1",
         std::string("--distribution_strategy=") + strategy,
         "--model_dir=" + (tmp.path() / "run").string()},
        {R"(TF_CONFIG={"cluster": {"evaluator": ["h7:1", "h8:1"]}, "task": {"type": "evaluator", "index": 0}})"});
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("2 'evaluator' tasks"), std::string::npos) << r.output;
  }
}

// An MNIST folder of IDX files (big-endian header: magic, then each dimension), `train` and
// `test` 28x28 images with labels 0..9.
std::string write_mnist_dir(const fs::path& dir, int train, int test) {
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, uint32_t magic, std::vector<uint32_t> dims,
                         uint32_t bytes_per_item) {
    std::ofstream out(dir / name, std::ios::binary);
    const uint32_t items = dims[0];
    dims.insert(dims.begin(), magic);
    for (uint32_t v : dims) {
      for (int shift : {24, 16, 8, 0}) out.put(char((v >> shift) & 0xff));
    }
    for (uint32_t i = 0; i < items * bytes_per_item; ++i) {
      out.put(char(bytes_per_item == 1 ? i % 10 : (i * 7) % 256));  // labels 0..9, or pixels
    }
  };
  write("train-images-idx3-ubyte", 0x803, {uint32_t(train), 28, 28}, 784);
  write("train-labels-idx1-ubyte", 0x801, {uint32_t(train)}, 1);
  write("t10k-images-idx3-ubyte", 0x803, {uint32_t(test), 28, 28}, 784);
  write("t10k-labels-idx1-ubyte", 0x801, {uint32_t(test)}, 1);
  return dir.string();
}

// mnist's evaluator reads --model_dir/checkpoints; the form without a cluster.
TEST(AppSidecarEvaluator, MnistParameterServerEvaluatorWithoutCluster) {
  TempDir tmp;
  const std::string data = write_mnist_dir(tmp.path() / "mnist", 40, 4);
  const fs::path dir = tmp.path() / "run";
  const std::vector<std::string> common{STRATA_MNIST_BIN, "--data_dir=" + data, "--model=seed_cnn",
                                        "--epochs=1", "--batch_size=4", "--verbose=2",
                                        "--model_dir=" + dir.string()};
  std::vector<std::string> train_args = common;
  train_args.push_back("--steps_per_epoch=2");
  const AppResult trained = run_app(train_args);
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  ASSERT_TRUE(fs::exists(dir / "checkpoints" / "ckpt-01.h5")) << trained.output;
  std::vector<std::string> evaluator_args = common;
  evaluator_args.push_back("--distribution_strategy=parameter_server");
  const AppResult r =
      run_app(evaluator_args, {R"(TF_CONFIG={"task": {"type": "evaluator", "index": 0}})"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Parameter-server job: evaluator 0: evaluates checkpoints"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("SidecarEvaluator: evaluated '" + (dir / "checkpoints" / "ckpt-01.h5").string()),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Evaluator: evaluated 1 checkpoint(s)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace strata::apps_testing
