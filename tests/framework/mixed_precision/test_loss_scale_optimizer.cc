// LossScaleOptimizer: Keras 3's dynamic loss scaling. Finite steps are unscaled and applied,
// non-finite ones skipped with the scale halved, the scale doubles after dynamic_growth_steps
// finite steps, every replica of a strategy takes the same decision, and the config round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <strata/strata.h>

#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/framework/optimizers/optimizer_test_util.h"

namespace strata {
namespace {

using optimizers::LossScaleOptimizer;
using optimizers::LossScaleOptimizerOptions;
using testing::expect_error;
using testing::make_var;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::shared_ptr<LossScaleOptimizer> sgd_lso(double initial_scale, int64_t growth_steps,
                                            double lr = 0.5) {
  return std::make_shared<LossScaleOptimizer>(
      std::make_shared<optimizers::SGD>(lr),
      LossScaleOptimizerOptions().initial_scale(initial_scale).dynamic_growth_steps(growth_steps));
}

std::vector<float> floats(const VariablePtr& v) { return v->value().to_vector<float>(); }

TEST(LossScaleOptimizer, KerasDefaults) {
  LossScaleOptimizer opt(std::make_shared<optimizers::Adam>(1e-3));
  EXPECT_EQ(opt.initial_scale(), 32768.0);  // 2**15
  EXPECT_EQ(opt.dynamic_growth_steps(), 2000);
  EXPECT_EQ(opt.loss_scale(), 32768.0);
  EXPECT_EQ(opt.class_name(), "LossScaleOptimizer");
  EXPECT_EQ(opt.dynamic_scale()->dtype(), float32);
  EXPECT_EQ(opt.step_counter()->dtype(), int64);
  EXPECT_EQ(opt.step_counter()->value().item<int64_t>(), 0);
  EXPECT_EQ(opt.dynamic_scale()->name(), "LossScaleOptimizer/dynamic_scale");
  EXPECT_EQ(opt.inner_optimizer()->class_name(), "Adam");
}

TEST(LossScaleOptimizer, InvalidArgumentsAreNamed) {
  const auto sgd = std::make_shared<optimizers::SGD>();
  expect_error<ValueError>([] { LossScaleOptimizer(nullptr); }, {"inner_optimizer", "null"});
  expect_error<ValueError>([&] { LossScaleOptimizer(std::make_shared<LossScaleOptimizer>(sgd)); },
                           {"already a LossScaleOptimizer"});
  for (double bad : {0.0, -1.0, double(kInf), double(kNaN), 1e39}) {
    expect_error<ValueError>(
        [&] { LossScaleOptimizer(sgd, LossScaleOptimizerOptions().initial_scale(bad)); },
        {"initial_scale"});
  }
  expect_error<ValueError>(
      [&] { LossScaleOptimizer(sgd, LossScaleOptimizerOptions().dynamic_growth_steps(0)); },
      {"dynamic_growth_steps", "0"});
}

TEST(LossScaleOptimizer, ScaleLossMultipliesTheLossAndItsGradients) {
  auto opt = sgd_lso(1024, 10);
  const VariablePtr v = make_var("scale_loss/v", {3.f});
  GradientTape tape;
  const Tensor loss = square(v->value());
  const Tensor scaled = opt->scale_loss(loss);
  EXPECT_EQ(scaled.item<float>(), 9.f * 1024.f);
  EXPECT_EQ(tape.gradient(scaled, std::vector<VariablePtr>{v})[0].item<float>(), 6.f * 1024.f);
  expect_error<DTypeError>([&] { opt->scale_loss(Tensor::scalar<int64_t>(1)); }, {"scale_loss"});
}

TEST(LossScaleOptimizer, FiniteStepsAreUnscaledAndApplied) {
  auto opt = sgd_lso(64, 10);
  const VariablePtr a = make_var("finite/a", {1.f, 2.f}), b = make_var("finite/b", {5.f}, Shape{1});
  // The gradients of a scaled loss: the true gradients times 64.
  opt->apply_gradients({tensor({64.f, -128.f}), tensor({32.f})}, {a, b});
  EXPECT_EQ(floats(a), (std::vector<float>{0.5f, 3.f}));  // 1 - 0.5 * 1, 2 - 0.5 * -2
  EXPECT_EQ(floats(b), (std::vector<float>{4.75f}));
  EXPECT_EQ(opt->iteration_count(), 1);
  EXPECT_EQ(opt->inner_optimizer()->iteration_count(), 1);
  EXPECT_EQ(opt->step_counter()->value().item<int64_t>(), 1);
  EXPECT_EQ(opt->loss_scale(), 64.0);
}

TEST(LossScaleOptimizer, NonFiniteGradientSkipsTheStepAndHalvesTheScale) {
  for (float bad : {kInf, -kInf, kNaN}) {
    SCOPED_TRACE(bad);
    auto opt = sgd_lso(64, 10);
    const VariablePtr a = make_var("skip/a", {1.f, 2.f}), b = make_var("skip/b", {5.f}, Shape{1});
    opt->apply_gradients({tensor({64.f, 64.f}), tensor({64.f})}, {a, b});  // one good step
    const std::vector<float> a1 = floats(a), b1 = floats(b);
    ASSERT_EQ(opt->step_counter()->value().item<int64_t>(), 1);
    // One bad element in one gradient: nothing moves, not even the other variable.
    opt->apply_gradients({tensor({64.f, 64.f}), tensor({bad})}, {a, b});
    EXPECT_EQ(floats(a), a1);
    EXPECT_EQ(floats(b), b1);
    EXPECT_EQ(opt->iteration_count(), 1);
    EXPECT_EQ(opt->loss_scale(), 32.0);
    EXPECT_EQ(opt->step_counter()->value().item<int64_t>(), 0);
    // An undefined gradient is ignored by the check (and by the update).
    opt->apply_gradients({Tensor(), tensor({bad})}, {a, b});
    EXPECT_EQ(opt->loss_scale(), 16.0);
    opt->apply_gradients({Tensor(), tensor({16.f})}, {a, b});
    EXPECT_EQ(floats(a), a1);
    EXPECT_EQ(floats(b), (std::vector<float>{b1[0] - 0.5f}));
    EXPECT_EQ(opt->iteration_count(), 2);
  }
}

TEST(LossScaleOptimizer, ScaleDoublesAfterDynamicGrowthStepsFiniteSteps) {
  auto opt = sgd_lso(8, 3, /*lr=*/0.0);
  const VariablePtr v = make_var("growth/v", {1.f}, Shape{1});
  auto step = [&](float g) { opt->apply_gradients({tensor({g})}, {v}); };
  step(1.f);
  step(1.f);
  EXPECT_EQ(opt->loss_scale(), 8.0);
  EXPECT_EQ(opt->step_counter()->value().item<int64_t>(), 2);
  step(1.f);  // the third finite step in a row
  EXPECT_EQ(opt->loss_scale(), 16.0);
  EXPECT_EQ(opt->step_counter()->value().item<int64_t>(), 0);
  step(1.f);
  step(kInf);  // an overflow restarts the count
  EXPECT_EQ(opt->loss_scale(), 8.0);
  step(1.f);
  step(1.f);
  EXPECT_EQ(opt->loss_scale(), 8.0);
  step(1.f);
  EXPECT_EQ(opt->loss_scale(), 16.0);
  EXPECT_EQ(opt->iteration_count(), 7);  // every finite step, none of the skipped one
}

TEST(LossScaleOptimizer, ScaleStaysFiniteAndAtLeastOne) {
  const VariablePtr v = make_var("bounds/v", {1.f}, Shape{1});
  auto low = sgd_lso(2, 100);
  low->apply_gradients({tensor({kNaN})}, {v});
  EXPECT_EQ(low->loss_scale(), 1.0);
  low->apply_gradients({tensor({kNaN})}, {v});
  EXPECT_EQ(low->loss_scale(), 1.0);  // never 0 (1 / 0 would poison the next update)
  auto tiny = sgd_lso(0.25, 100);     // a scale chosen below 1 is not lowered further
  tiny->apply_gradients({tensor({kNaN})}, {v});
  EXPECT_EQ(tiny->loss_scale(), 0.25);
  auto high = sgd_lso(std::ldexp(1.0, 127), 1, /*lr=*/0.0);  // 2**127; 2**128 overflows float32
  high->apply_gradients({tensor({0.f})}, {v});
  EXPECT_EQ(high->loss_scale(), std::ldexp(1.0, 127));
  EXPECT_EQ(high->step_counter()->value().item<int64_t>(), 0);
}

TEST(LossScaleOptimizer, EverythingElseIsTheInnerOptimizers) {
  auto inner = std::make_shared<optimizers::Adam>(0.01);
  LossScaleOptimizer opt(inner, LossScaleOptimizerOptions().name("lso"));
  const VariablePtr v = make_var("forward/v", {1.f, 2.f});
  opt.build({v});
  EXPECT_EQ(opt.iterations(), inner->iterations());
  EXPECT_EQ(opt.learning_rate(), 0.01);
  opt.set_learning_rate(0.5);
  EXPECT_EQ(inner->learning_rate(), 0.5);
  EXPECT_EQ(opt.get_slot(v, "m"), inner->get_slot(v, "m"));
  ASSERT_NE(opt.get_slot(v, "m"), nullptr);
  const std::vector<VariablePtr> vars = opt.variables();
  const std::vector<VariablePtr> inner_vars = inner->variables();
  ASSERT_EQ(vars.size(), inner_vars.size() + 2);
  EXPECT_EQ(vars[0]->name(), "lso/step_counter");
  EXPECT_EQ(vars[1]->name(), "lso/dynamic_scale");
  for (size_t i = 0; i < inner_vars.size(); ++i) EXPECT_EQ(vars[i + 2], inner_vars[i]);
  // Through the base class, as Model and the callbacks see it.
  optimizers::Optimizer& base = opt;
  base.apply_gradients({tensor({32768.f, 0.f})}, {v});
  EXPECT_EQ(inner->iteration_count(), 1);
  EXPECT_EQ(base.iteration_count(), 1);
  EXPECT_EQ(opt.step_counter()->value().item<int64_t>(), 1);
}

TEST(LossScaleOptimizer, ConfigIsKeras3sAndRoundTrips) {
  auto opt = std::make_shared<LossScaleOptimizer>(
      std::make_shared<optimizers::SGD>(0.25, 0.9),
      LossScaleOptimizerOptions().initial_scale(1024).dynamic_growth_steps(50).name("lso"));
  const Json config = opt->get_config();
  EXPECT_EQ(config.keys(), (std::vector<std::string>{"name", "inner_optimizer", "initial_scale",
                                                     "dynamic_growth_steps"}));
  EXPECT_EQ(config.at("name").as_string(), "lso");
  EXPECT_EQ(config.at("initial_scale").as_double(), 1024.0);
  EXPECT_EQ(config.at("dynamic_growth_steps").as_int(), 50);
  const Json inner = config.at("inner_optimizer");
  EXPECT_EQ(inner.at("module").as_string(), "keras.optimizers");
  EXPECT_EQ(inner.at("class_name").as_string(), "SGD");
  EXPECT_TRUE(inner.at("registered_name").is_null());
  EXPECT_EQ(inner.at("config").at("momentum").as_double(), 0.9);

  const Json serialized = Json::parse(optimizers::serialize(*opt).dump());
  const auto back = optimizers::deserialize(serialized);
  auto lso = std::dynamic_pointer_cast<LossScaleOptimizer>(back);
  ASSERT_NE(lso, nullptr);
  EXPECT_EQ(lso->get_config(), config);
  EXPECT_EQ(lso->loss_scale(), 1024.0);
  EXPECT_EQ(lso->inner_optimizer()->learning_rate(), 0.25);

  // Keras 2's form ("dynamic": true) reads too; "dynamic": false is refused as in Keras 3.
  Json keras2 = Json::parse(R"({"class_name": "LossScaleOptimizer", "config": {
      "inner_optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.002}},
      "dynamic": true, "initial_scale": 32768.0, "dynamic_growth_steps": 2000}})");
  auto k2 = std::dynamic_pointer_cast<LossScaleOptimizer>(optimizers::deserialize(keras2));
  ASSERT_NE(k2, nullptr);
  EXPECT_EQ(k2->inner_optimizer()->class_name(), "Adam");
  EXPECT_EQ(k2->dynamic_growth_steps(), 2000);
  expect_error<ValueError>(
      [] {
        optimizers::deserialize(Json::parse(R"({"class_name": "LossScaleOptimizer", "config": {
            "inner_optimizer": {"class_name": "SGD", "config": {}}, "dynamic": false}})"));
      },
      {"dynamic=false"});
  expect_error<ValueError>(
      [] {
        optimizers::deserialize(
            Json::parse(R"({"class_name": "LossScaleOptimizer", "config": {}})"));
      },
      {"inner_optimizer"});
}

// Two logical CPU replicas; replica 1 alone overflows. Without agreement replica 0 would update
// and wait in the gradient all-reduce for a replica that skipped.
class LossScaleOptimizerStrategy : public ::testing::Test {
 protected:
  void SetUp() override { config::set_logical_cpu_devices(2); }
  void TearDown() override { config::set_logical_cpu_devices(1); }

  // Per replica: [v0, v1, loss scale, step counter, iterations] after three steps, the first with
  // an overflow on replica 1.
  static void expect_same_decisions(distribute::Strategy& strategy) {
    VariablePtr v;
    std::shared_ptr<LossScaleOptimizer> opt;
    {
      auto scope = strategy.scope();
      v = make_var("replicated/v", {1.f, 2.f});
      opt = sgd_lso(8, 2);
    }
    std::vector<std::vector<float>> after;  // one state per replica per step
    for (int step = 0; step < 3; ++step) {
      const distribute::PerReplica state = strategy.run([&]() -> Tensor {
        const int replica = distribute::current_replica_context()->replica_id_in_sync_group();
        // This replica's scaled gradient of its loss (true gradient [1, -1]).
        const float s = float(opt->loss_scale());
        const bool overflow = step == 0 && replica == 1;
        opt->apply_gradients({tensor({overflow ? kInf : s, -s})}, {v});
        return tensor({v->value().to_vector<float>()[0], v->value().to_vector<float>()[1],
                       float(opt->loss_scale()),
                       float(opt->step_counter()->value().item<int64_t>()),
                       float(opt->iteration_count())});
      });
      ASSERT_EQ(state.values.size(), 2u);
      EXPECT_EQ(state.values[0].to_vector<float>(), state.values[1].to_vector<float>())
          << "step " << step;
      after.push_back(state.values[0].to_vector<float>());
    }
    // Skipped everywhere: nothing moved, the scale halved.
    EXPECT_EQ(after[0], (std::vector<float>{1.f, 2.f, 4.f, 0.f, 0.f}));
    // Then the replicas' unscaled gradients are summed ([2, -2]) and applied with lr 0.5.
    EXPECT_EQ(after[1], (std::vector<float>{0.f, 3.f, 4.f, 1.f, 1.f}));
    // The second finite step in a row doubles the scale.
    EXPECT_EQ(after[2], (std::vector<float>{-1.f, 4.f, 8.f, 0.f, 2.f}));
    EXPECT_EQ(v->value().to_vector<float>(), (std::vector<float>{-1.f, 4.f}));
  }
};

TEST_F(LossScaleOptimizerStrategy, MirroredReplicasSkipTogether) {
  distribute::MirroredStrategy strategy(testing::cpus(2));
  expect_same_decisions(strategy);
}

TEST_F(LossScaleOptimizerStrategy, CentralStorageReplicasSkipTogether) {
  distribute::CentralStorageStrategy strategy(testing::cpus(2));
  expect_same_decisions(strategy);
}

}  // namespace
}  // namespace strata
