// Metrics and outputs under a strategy are global: the replicas' metric states (SyncOnRead
// variables) are summed when read, so evaluate() and fit() report what they would without a
// strategy for the same weights, and predict() puts the replicas' outputs back in input order.
#include "distribute/variables/replicated_variable.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {
namespace {

// A model trained a little without a strategy: its weights give an accuracy strictly between
// 0 and 1 on fresh data, so a metric that saw only some replicas' samples would show.
const std::vector<Tensor>& trained_weights() {
  static const std::vector<Tensor> weights = [] {
    auto model = small_classifier();
    const ClassifierData d = classifier_data(64, 21);
    model->fit(d.x, d.y, FitOptions().epochs(3).batch_size(16).shuffle(false).verbose(0));
    return model->get_weights();
  }();
  return weights;
}

std::shared_ptr<Sequential> model_with_trained_weights(distribute::Strategy* strategy) {
  std::shared_ptr<Sequential> model;
  if (strategy) {
    auto scope = strategy->scope();
    model = small_classifier();
  } else {
    model = small_classifier();
  }
  model->set_weights(trained_weights());
  return model;
}

void expect_close(double got, double want, double rtol, const std::string& what) {
  EXPECT_NEAR(got, want, rtol * std::fabs(want) + 1e-12) << what;
}

// The number of samples a metric has counted (its "count" state, read cross-replica).
double metric_count(Model& model, const std::string& metric_name) {
  for (const auto& m : model.metrics()) {
    if (m->name() != metric_name) continue;
    for (const VariablePtr& v : m->variables()) {
      if (v->name().find("count") != std::string::npos) return v->value().item<double>();
    }
  }
  ADD_FAILURE() << "no metric " << metric_name << " with a count";
  return -1;
}

class StrategyMetrics : public ::testing::Test {
 protected:
  void SetUp() override { config::set_logical_cpu_devices(4); }
  void TearDown() override { config::set_logical_cpu_devices(1); }
};

TEST_F(StrategyMetrics, EvaluateUnderMirroredEqualsNoStrategyForTheSameWeights) {
  // 40: every batch splits evenly; 37: the last batch (5) splits unevenly; 35: the last batch
  // (3) leaves a stand-in replica with four replicas.
  for (int64_t samples : {40, 37, 35}) {
    const ClassifierData d = classifier_data(samples, 5);
    auto reference_model = model_with_trained_weights(nullptr);
    const auto reference =
        reference_model->evaluate(d.x, d.y, EvaluateOptions().batch_size(8).verbose(0));
    const double accuracy = reference.at("accuracy");
    ASSERT_GT(accuracy, 0.0);
    ASSERT_LT(accuracy, 1.0);
    for (int replicas : {2, 4}) {
      SCOPED_TRACE(std::to_string(samples) + " samples, " + std::to_string(replicas) + " replicas");
      distribute::MirroredStrategy strategy(cpus(replicas));
      auto model = model_with_trained_weights(&strategy);
      const auto got = model->evaluate(d.x, d.y, EvaluateOptions().batch_size(8).verbose(0));
      ASSERT_EQ(got.size(), reference.size());
      expect_close(got.at("loss"), reference.at("loss"), 1e-6, "loss");
      expect_close(got.at("accuracy"), accuracy, 1e-6, "accuracy");
      // Every sample was counted exactly once, over all replicas (stand-ins not at all).
      EXPECT_EQ(metric_count(*model, "accuracy"), double(samples));
      // A second evaluate starts from reset metrics.
      const auto again = model->evaluate(d.x, d.y, EvaluateOptions().batch_size(8).verbose(0));
      expect_close(again.at("accuracy"), accuracy, 1e-6, "accuracy, second evaluate");
      EXPECT_EQ(metric_count(*model, "accuracy"), double(samples));
    }
  }
}

TEST_F(StrategyMetrics, SampleWeightedEvaluateUnderMirroredEqualsNoStrategy) {
  for (int64_t samples : {40, 37}) {
    const ClassifierData d = classifier_data(samples, 19);
    // Weights 0.5, 1, 1.5, 2, 0, 0.5, ...: each replica's slice carries different weights.
    std::vector<float> w;
    for (int64_t i = 0; i < samples; ++i) w.push_back(0.5f * float(i % 5 == 4 ? 0 : 1 + i % 5));
    const Tensor sample_weight = Tensor::from_vector(w, Shape{samples});
    auto reference_model = model_with_trained_weights(nullptr);
    const auto opts = EvaluateOptions().batch_size(8).verbose(0).sample_weight(sample_weight);
    const auto reference = reference_model->evaluate(d.x, d.y, opts);
    const auto unweighted = reference_model->evaluate(d.x, d.y, EvaluateOptions().batch_size(8).verbose(0));
    ASSERT_NE(reference.at("loss"), unweighted.at("loss")) << "the weights must matter";
    for (int replicas : {2, 4}) {
      SCOPED_TRACE(std::to_string(samples) + " samples, " + std::to_string(replicas) + " replicas");
      distribute::MirroredStrategy strategy(cpus(replicas));
      auto model = model_with_trained_weights(&strategy);
      const auto got = model->evaluate(d.x, d.y, opts);
      expect_close(got.at("loss"), reference.at("loss"), 1e-6, "loss");
      expect_close(got.at("accuracy"), reference.at("accuracy"), 1e-6, "accuracy");
    }
  }
}

// Keras' loss tracker weights each batch's mean loss by the batch's size (Keras 3 trainers:
// `_loss_tracker.update_state(loss, sample_weight=batch_size)`; Keras 2's LossesContainer: the
// same with batch_dim), so evaluate()'s "loss" is the mean over every sample, whatever the batch
// size and however the batches are split over replicas. 37 samples in batches of 8 end with a
// batch of 5 that an unweighted mean of batch means would over-count.
TEST_F(StrategyMetrics, EvaluateLossIsTheMeanOverSamplesWithAPartialLastBatch) {
  const ClassifierData d = classifier_data(37, 5);
  auto reference_model = model_with_trained_weights(nullptr);
  const losses::SparseCategoricalCrossentropy loss_fn(/*from_logits=*/true);
  const double per_sample_mean =
      loss_fn(d.y, reference_model->predict(d.x, PredictOptions().batch_size(37).verbose(0))).item<double>();
  const auto one_batch = reference_model->evaluate(d.x, d.y, EvaluateOptions().batch_size(37).verbose(0));
  expect_close(one_batch.at("loss"), per_sample_mean, 1e-5, "no strategy, one batch of 37");
  {
    SCOPED_TRACE("no strategy");
    const auto got = reference_model->evaluate(d.x, d.y, EvaluateOptions().batch_size(8).verbose(0));
    expect_close(got.at("loss"), per_sample_mean, 1e-5, "no strategy, batches of 8");
  }
  for (int replicas : {2, 4}) {
    SCOPED_TRACE(std::to_string(replicas) + " replicas");
    distribute::MirroredStrategy strategy(cpus(replicas));
    auto model = model_with_trained_weights(&strategy);
    const auto got = model->evaluate(d.x, d.y, EvaluateOptions().batch_size(8).verbose(0));
    expect_close(got.at("loss"), per_sample_mean, 1e-5, "batches of 8 over replicas");
  }
}

TEST_F(StrategyMetrics, FitReportsTheAccuracyOfTheWeightsItStartedFrom) {
  // One step on the whole data as one batch: the metrics see the predictions made before the
  // update, so fit's reported loss and accuracy are those of the starting weights.
  const ClassifierData d = classifier_data(40, 9);
  auto reference_model = model_with_trained_weights(nullptr);
  const auto reference = reference_model->evaluate(d.x, d.y, EvaluateOptions().batch_size(40).verbose(0));
  ASSERT_GT(reference.at("accuracy"), 0.0);
  ASSERT_LT(reference.at("accuracy"), 1.0);
  for (int replicas : {1, 2, 4}) {
    SCOPED_TRACE(std::to_string(replicas) + " replicas");
    distribute::MirroredStrategy strategy(cpus(replicas));
    auto model = model_with_trained_weights(&strategy);
    const History h = model->fit(d.x, d.y, FitOptions().epochs(1).batch_size(40).verbose(0));
    ASSERT_EQ(h.history.at("accuracy").size(), 1u);
    expect_close(h.history.at("accuracy")[0], reference.at("accuracy"), 1e-6, "accuracy");
    expect_close(h.history.at("loss")[0], reference.at("loss"), 1e-6, "loss");
  }
}

TEST_F(StrategyMetrics, FitHistoryUnderMirroredEqualsNoStrategy) {
  const ClassifierData d = classifier_data(48, 13);
  auto reference_model = model_with_trained_weights(nullptr);
  const History reference =
      reference_model->fit(d.x, d.y, FitOptions().epochs(2).batch_size(8).shuffle(false).verbose(0));
  for (int replicas : {2, 4}) {
    SCOPED_TRACE(std::to_string(replicas) + " replicas");
    distribute::MirroredStrategy strategy(cpus(replicas));
    auto model = model_with_trained_weights(&strategy);
    const History h = model->fit(d.x, d.y, FitOptions().epochs(2).batch_size(8).shuffle(false).verbose(0));
    for (const char* key : {"loss", "accuracy"}) {
      ASSERT_EQ(h.history.at(key).size(), 2u) << key;
      for (size_t e = 0; e < 2; ++e) {
        expect_close(h.history.at(key)[e], reference.history.at(key)[e], 1e-5,
                     std::string(key) + " epoch " + std::to_string(e));
      }
    }
    EXPECT_EQ(metric_count(*model, "accuracy"), 48.0) << "the last epoch's samples, counted once";
  }
}

TEST_F(StrategyMetrics, PredictUnderMirroredKeepsInputOrder) {
  for (int64_t samples : {40, 37, 35}) {
    const ClassifierData d = classifier_data(samples, 17);
    auto reference_model = model_with_trained_weights(nullptr);
    const Tensor reference = reference_model->predict(d.x, PredictOptions().batch_size(8).verbose(0));
    ASSERT_EQ(reference.shape(), (Shape{samples, 3}));
    for (int replicas : {2, 4}) {
      SCOPED_TRACE(std::to_string(samples) + " samples, " + std::to_string(replicas) + " replicas");
      distribute::MirroredStrategy strategy(cpus(replicas));
      auto model = model_with_trained_weights(&strategy);
      const Tensor got = model->predict(d.x, PredictOptions().batch_size(8).verbose(0));
      ASSERT_EQ(got.shape(), reference.shape());
      expect_weights_near({got}, {reference}, 1e-6, 1e-6);
      // From a Dataset of batches, too.
      const Tensor from_dataset =
          model->predict(data::Dataset::from_tensor_slices({d.x}).batch(8), PredictOptions().verbose(0));
      ASSERT_EQ(from_dataset.shape(), reference.shape());
      expect_weights_near({from_dataset}, {reference}, 1e-6, 1e-6);
    }
  }
}

TEST_F(StrategyMetrics, ResetStateZeroesEveryReplicaCopy) {
  distribute::MirroredStrategy strategy(cpus(2));
  auto model = model_with_trained_weights(&strategy);
  const ClassifierData d = classifier_data(16, 5);
  model->evaluate(d.x, d.y, EvaluateOptions().batch_size(8).verbose(0));
  EXPECT_EQ(metric_count(*model, "accuracy"), 16.0);
  model->reset_metrics();
  for (const auto& m : model->metrics()) {
    EXPECT_EQ(m->result().item<double>(), 0.0) << m->name();
    for (const VariablePtr& v : m->variables()) {
      auto s = std::dynamic_pointer_cast<distribute::SyncOnReadVariable>(v);
      ASSERT_NE(s, nullptr) << v->name();
      for (const VariablePtr& c : s->components()) {
        EXPECT_EQ(c->value().item<double>(), 0.0) << v->name();
      }
    }
  }
  // Batches counted after the reset add up from zero, over both replicas.
  model->test_on_batch(d.x.slice(0, 8), d.y.slice(0, 8), Tensor(), /*reset=*/false);
  EXPECT_EQ(metric_count(*model, "accuracy"), 8.0);
  model->test_on_batch(d.x.slice(8, 16), d.y.slice(8, 16), Tensor(), /*reset=*/false);
  EXPECT_EQ(metric_count(*model, "accuracy"), 16.0);
}

}  // namespace
}  // namespace strata::testing
