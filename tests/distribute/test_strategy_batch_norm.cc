// BatchNormalization under CentralStorageStrategy and MirroredStrategy: its moving statistics
// (aggregation mean) become the mean of what the replicas computed on their slices, as in Keras;
// training stays finite and metric state (SyncOnRead) resets on every replica.
#include <cmath>

#include "distribute/variables/central_variable.h"
#include "distribute/variables/replicated_variable.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {
namespace {

std::shared_ptr<Sequential> bn_classifier(distribute::Strategy* strategy) {
  if (strategy == nullptr) return small_classifier("sgd", Norm::kBatchNorm);
  auto scope = strategy->scope();
  return small_classifier("sgd", Norm::kBatchNorm);
}

VariablePtr weight_named(const Model& model, const std::string& part) {
  for (const VariablePtr& w : model.weights()) {
    if (w->name().find(part) != std::string::npos) return w;
  }
  ADD_FAILURE() << "no weight named *" << part << "*";
  return nullptr;
}

std::vector<double> values_of(const VariablePtr& v) { return v->value().to_vector<double>(); }

// The batch statistic one BatchNormalization step (momentum 0.99) folded into a moving statistic
// that started at `initial`: moving = initial * 0.99 + batch * 0.01.
std::vector<double> batch_statistic(const VariablePtr& moving, double initial) {
  std::vector<double> out = values_of(moving);
  for (double& x : out) x = (x - 0.99 * initial) / 0.01;
  return out;
}

class StrategyBatchNorm : public ::testing::Test {
 protected:
  void SetUp() override { config::set_logical_cpu_devices(4); }
  void TearDown() override { config::set_logical_cpu_devices(1); }
};

// One step on 16 samples over four replicas (4 each): the moving statistics after it must be
// the mean of those four single-replica models would have after one step on their 4 samples.
TEST_F(StrategyBatchNorm, MovingStatisticsAreTheMeanOverReplicas) {
  const ClassifierData d = classifier_data(16, 31);
  std::vector<double> want_mean, want_var, first_mean, first_var;
  for (int q = 0; q < 4; ++q) {
    auto single = bn_classifier(nullptr);
    single->fit(d.x.slice(4 * q, 4 * q + 4), d.y.slice(4 * q, 4 * q + 4),
                FitOptions().epochs(1).batch_size(4).shuffle(false).verbose(0));
    const std::vector<double> m = batch_statistic(weight_named(*single, "moving_mean"), 0.0);
    const std::vector<double> v = batch_statistic(weight_named(*single, "moving_variance"), 1.0);
    if (q == 0) first_mean = m, first_var = v;
    if (want_mean.empty()) want_mean.assign(m.size(), 0.0), want_var.assign(v.size(), 0.0);
    for (size_t c = 0; c < m.size(); ++c) want_mean[c] += m[c] / 4.0, want_var[c] += v[c] / 4.0;
  }
  // Without a strategy, one step on the whole batch gives another variance (the global batch's
  // rather than the mean of the slices'), so the check below tells the two apart.
  auto whole = bn_classifier(nullptr);
  whole->fit(d.x, d.y, FitOptions().epochs(1).batch_size(16).shuffle(false).verbose(0));
  const std::vector<double> global_var = batch_statistic(weight_named(*whole, "moving_variance"), 1.0);
  double var_gap = 0;
  for (size_t c = 0; c < global_var.size(); ++c) var_gap = std::max(var_gap, std::fabs(global_var[c] - want_var[c]));
  ASSERT_GT(var_gap, 1e-3);
  // Nor is it any single replica's statistic (what a missing aggregation would keep).
  double first_gap = 0;
  for (size_t c = 0; c < first_mean.size(); ++c) {
    first_gap = std::max({first_gap, std::fabs(first_mean[c] - want_mean[c]),
                          std::fabs(first_var[c] - want_var[c])});
  }
  ASSERT_GT(first_gap, 1e-2);

  distribute::CentralStorageStrategy central(cpus(4));
  distribute::MirroredStrategy mirrored(cpus(4));
  for (distribute::Strategy* strategy : std::vector<distribute::Strategy*>{&central, &mirrored}) {
    SCOPED_TRACE(strategy->name());
    auto model = bn_classifier(strategy);
    model->fit(d.x, d.y, FitOptions().epochs(1).batch_size(16).shuffle(false).verbose(0));
    const VariablePtr mean = weight_named(*model, "moving_mean");
    const VariablePtr var = weight_named(*model, "moving_variance");
    ASSERT_TRUE(mean && var);
    EXPECT_EQ(mean->aggregation(), VariableAggregation::kMean);
    const std::vector<double> got_mean = batch_statistic(mean, 0.0), got_var = batch_statistic(var, 1.0);
    ASSERT_EQ(got_mean.size(), want_mean.size());
    for (size_t c = 0; c < want_mean.size(); ++c) {
      // float32 moving statistics near 1, divided by 0.01: about 1e-5 of rounding.
      EXPECT_NEAR(got_mean[c], want_mean[c], 1e-4) << "channel " << c;
      EXPECT_NEAR(got_var[c], want_var[c], 1e-4) << "channel " << c;
    }
    if (auto m = std::dynamic_pointer_cast<distribute::MirroredVariable>(mean)) {
      for (const VariablePtr& c : m->components()) {
        EXPECT_EQ(c->value().to_vector<double>(), values_of(mean)) << "mirrored copies agree";
      }
    }
  }
}

TEST_F(StrategyBatchNorm, CentralStorageTrainsWithFiniteMovingStatistics) {
  const ClassifierData d = classifier_data(64, 33);
  distribute::CentralStorageStrategy strategy(cpus(4));
  auto model = bn_classifier(&strategy);
  for (const VariablePtr& w : model->weights()) {
    EXPECT_NE(std::dynamic_pointer_cast<distribute::CentralVariable>(w), nullptr) << w->name();
    EXPECT_EQ(w->device(), Device::cpu(0)) << w->name();
  }
  const History h = model->fit(d.x, d.y, FitOptions().epochs(3).batch_size(16).verbose(0));
  for (double loss : h.history.at("loss")) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_LT(h.history.at("loss").back(), h.history.at("loss").front()) << "it learns";
  const std::vector<double> mean = values_of(weight_named(*model, "moving_mean"));
  const std::vector<double> var = values_of(weight_named(*model, "moving_variance"));
  for (size_t c = 0; c < mean.size(); ++c) {
    EXPECT_TRUE(std::isfinite(mean[c])) << c;
    EXPECT_TRUE(std::isfinite(var[c])) << c;
    EXPECT_GT(var[c], 0.0) << c;
    EXPECT_NE(var[c], 1.0) << "moving variance of channel " << c << " never updated";
  }
  double mean_abs = 0;
  for (double m : mean) mean_abs += std::fabs(m);
  EXPECT_GT(mean_abs, 0.0) << "moving mean never updated";

  // Inference uses the moving statistics: evaluate under the strategy equals evaluate of the same
  // weights without one.
  auto plain = bn_classifier(nullptr);
  plain->set_weights(model->get_weights());
  const auto want = plain->evaluate(d.x, d.y, EvaluateOptions().batch_size(16).verbose(0));
  const auto got = model->evaluate(d.x, d.y, EvaluateOptions().batch_size(16).verbose(0));
  EXPECT_NEAR(got.at("loss"), want.at("loss"), 1e-6 * std::fabs(want.at("loss")));
  EXPECT_NEAR(got.at("accuracy"), want.at("accuracy"), 1e-6);
}

TEST_F(StrategyBatchNorm, CentralStorageMetricResetClearsEveryReplicaCopy) {
  const ClassifierData d = classifier_data(32, 35);
  distribute::CentralStorageStrategy strategy(cpus(4));
  auto model = bn_classifier(&strategy);
  model->fit(d.x, d.y, FitOptions().epochs(1).batch_size(16).verbose(0));
  const auto metrics = model->metrics();
  ASSERT_EQ(metrics.size(), 2u);
  // Before the reset: each replica's copy holds its own share (4 samples per step, 2 steps).
  auto count = [&](const std::shared_ptr<metrics::Metric>& m) -> std::shared_ptr<distribute::SyncOnReadVariable> {
    for (const VariablePtr& v : m->variables()) {
      if (v->name().find("count") != std::string::npos) {
        return std::dynamic_pointer_cast<distribute::SyncOnReadVariable>(v);
      }
    }
    return nullptr;
  };
  auto accuracy_count = count(metrics[1]);
  ASSERT_NE(accuracy_count, nullptr);
  ASSERT_EQ(accuracy_count->num_copies(), 4);
  for (const VariablePtr& c : accuracy_count->components()) EXPECT_EQ(c->value().item<double>(), 8.0);
  EXPECT_EQ(accuracy_count->value().item<double>(), 32.0);

  model->reset_metrics();
  for (const auto& m : metrics) {
    EXPECT_EQ(m->result().item<double>(), 0.0) << m->name();
    for (const VariablePtr& v : m->variables()) {
      auto s = std::dynamic_pointer_cast<distribute::SyncOnReadVariable>(v);
      ASSERT_NE(s, nullptr) << v->name();
      for (const VariablePtr& c : s->components()) EXPECT_EQ(c->value().item<double>(), 0.0) << v->name();
    }
  }
  // Counting goes on from zero on every copy.
  model->test_on_batch(d.x.slice(0, 16), d.y.slice(0, 16), Tensor(), /*reset_metrics=*/false);
  for (const VariablePtr& c : accuracy_count->components()) EXPECT_EQ(c->value().item<double>(), 4.0);
  EXPECT_EQ(accuracy_count->value().item<double>(), 16.0);
}

}  // namespace
}  // namespace strata::testing
