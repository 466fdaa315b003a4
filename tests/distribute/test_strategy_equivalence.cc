// k training steps under a strategy with global batch B must give the same weights and metrics as
// the same steps without a strategy (TensorFlow's compute_average_loss semantics: replicas'
// gradients of the scaled loss sum to the global batch's gradient).
#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {
namespace {

struct TrainRun {
  std::vector<Tensor> weights;
  History history;
};

TrainRun train(distribute::Strategy* strategy, const std::string& optimizer, Norm norm, int64_t batch,
          int64_t samples, int epochs = 2) {
  const ClassifierData d = classifier_data(samples);
  std::shared_ptr<Sequential> model;
  if (strategy) {
    auto scope = strategy->scope();
    model = small_classifier(optimizer, norm);
  } else {
    model = small_classifier(optimizer, norm);
  }
  TrainRun r;
  r.history = model->fit(d.x, d.y, FitOptions().epochs(epochs).batch_size(batch).shuffle(false).verbose(0));
  r.weights = model->get_weights();
  return r;
}

void expect_same_history(const History& a, const History& b, double rtol) {
  for (const char* key : {"loss", "accuracy"}) {
    const std::vector<double>& va = a.history.at(key);
    const std::vector<double>& vb = b.history.at(key);
    ASSERT_EQ(va.size(), vb.size()) << key;
    for (size_t e = 0; e < va.size(); ++e) {
      EXPECT_NEAR(va[e], vb[e], rtol * std::fabs(vb[e]) + 1e-7) << key << " epoch " << e;
    }
  }
}

// Same weights (|got - want| <= atol + rtol |want|) and the same loss/accuracy history (rtol).
void expect_same_run(const TrainRun& got, const TrainRun& want, double rtol, double atol = 1e-6) {
  expect_weights_near(got.weights, want.weights, rtol, atol);
  expect_same_history(got.history, want.history, rtol);
}

// The SGD run of 64 samples in batches of 16 under Mirrored with 2 and with 4 replicas.
void expect_mirrored_2_and_4_match(const TrainRun& reference, Norm norm) {
  for (int replicas : {2, 4}) {
    distribute::MirroredStrategy strategy(cpus(replicas));
    const TrainRun mirrored = train(&strategy, "sgd", norm, 16, 64);
    SCOPED_TRACE(std::to_string(replicas) + " replicas");
    expect_same_run(mirrored, reference, 1e-5);
  }
}

class StrategyEquivalence : public ::testing::Test {
 protected:
  void SetUp() override { config::set_logical_cpu_devices(4); }
  void TearDown() override { config::set_logical_cpu_devices(1); }
};

TEST_F(StrategyEquivalence, MirroredTwoAndFourReplicasMatchNoStrategy) {
  const TrainRun reference = train(nullptr, "sgd", Norm::kNone, 16, 64);
  expect_mirrored_2_and_4_match(reference, Norm::kNone);
}

TEST_F(StrategyEquivalence, MirroredWithAdamMatchesNoStrategy) {
  const TrainRun reference = train(nullptr, "adam", Norm::kNone, 16, 48);
  distribute::MirroredStrategy strategy(cpus(2));
  const TrainRun mirrored = train(&strategy, "adam", Norm::kNone, 16, 48);
  expect_same_run(mirrored, reference, 1e-5);
}

TEST_F(StrategyEquivalence, SyncBatchNormalizationMatchesGlobalBatchNorm) {
  const TrainRun reference = train(nullptr, "sgd", Norm::kSyncBatchNorm, 16, 64);
  const TrainRun plain_bn = train(nullptr, "sgd", Norm::kBatchNorm, 16, 64);
  expect_weights_near(plain_bn.weights, reference.weights, 1e-4, 1e-5);  // fused vs composed kernel
  expect_mirrored_2_and_4_match(reference, Norm::kSyncBatchNorm);
}

TEST_F(StrategyEquivalence, CentralStorageMatchesNoStrategy) {
  const TrainRun reference = train(nullptr, "sgd", Norm::kNone, 16, 64);
  distribute::CentralStorageStrategy strategy(cpus(4));
  const TrainRun central = train(&strategy, "sgd", Norm::kNone, 16, 64);
  expect_same_run(central, reference, 1e-5);
}

TEST_F(StrategyEquivalence, OneDeviceMatchesNoStrategyExactly) {
  const TrainRun reference = train(nullptr, "adam", Norm::kBatchNorm, 16, 48);
  distribute::OneDeviceStrategy strategy("/cpu:1");
  const TrainRun one = train(&strategy, "adam", Norm::kBatchNorm, 16, 48);
  expect_same_run(one, reference, 0.0, 0.0);
}

TEST_F(StrategyEquivalence, PartialLastBatchMatchesNoStrategy) {
  // 37 samples in batches of 16: the last batch of 5 spreads 2/1/1/1 over four replicas; with 3
  // samples over four, one replica gets a stand-in that must count for nothing.
  for (int64_t samples : {37, 35}) {
    const TrainRun reference = train(nullptr, "sgd", Norm::kNone, 16, samples);
    distribute::MirroredStrategy strategy(cpus(4));
    const TrainRun mirrored = train(&strategy, "sgd", Norm::kNone, 16, samples);
    SCOPED_TRACE(std::to_string(samples) + " samples");
    expect_same_run(mirrored, reference, 1e-5);
  }
}

}  // namespace
}  // namespace strata::testing
