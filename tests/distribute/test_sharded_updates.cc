// Sharded updates under MirroredStrategy on logical CPU devices: each replica gets its range of
// the summed gradients (reduce-scatter), updates that range of every variable and slot, and
// writes it into the other replicas' copies (the all-gather). Fit must give the weights it gives
// with no strategy, with every copy identical, whatever the optimizer, clipping or loss scaling.
#include <numeric>

#include "distribute/variables/replicated_variable.h"
#include "framework/strategy/gradient_reducer.h"
#include "framework/variables/variable_update.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/support/test_helpers.h"

namespace strata::testing {
namespace {

class ShardedUpdates : public ::testing::Test {
 protected:
  void SetUp() override { config::set_logical_cpu_devices(3); }
  void TearDown() override { config::set_logical_cpu_devices(1); }
};

TEST(GradientShard, HoldsARangeOfTheFlatGradientAndNoDenseValue) {
  const Gradient g = Gradient::shard(Tensor::from_vector(std::vector<float>{1, 2}), 3, Shape{2, 3});
  EXPECT_TRUE(g.is_shard());
  EXPECT_FALSE(g.is_sparse());
  EXPECT_TRUE(g.defined());
  EXPECT_EQ(g.shape(), (Shape{2, 3}));
  EXPECT_EQ(g.shard_begin(), 3);
  EXPECT_EQ(g.numbers().to_vector<float>(), (std::vector<float>{1, 2}));
  const Gradient half = g.scaled(0.5);
  EXPECT_TRUE(half.is_shard());
  EXPECT_EQ(half.shard_begin(), 3);
  EXPECT_EQ(half.numbers().to_vector<float>(), (std::vector<float>{0.5f, 1.0f}));
  expect_error<StateError>([&] { g.to_dense(); }, {"shard", "[3, 5)", "skip_gradients_aggregation"});
}

TEST(GradientShard, AddRangeUpdatesOnlyTheRangeAndWritesItIntoTheCopies) {
  Tensor value = Tensor::from_vector(std::vector<float>(10, 1.0f), Shape{2, 5});
  Tensor velocity = zeros({2, 5});
  Tensor other_value = full({2, 5}, 7.0), other_velocity = full({2, 5}, 7.0);
  OptimizerUpdate rule;
  rule.kind = OptimizerKind::kSGD;
  rule.learning_rate = 0.5f;
  rule.momentum = 0.9f;
  UpdateBatch batch;
  UpdateBatch::RangeCopies copies;
  copies.value = {other_value};
  copies.slots = {{other_velocity}};
  batch.add_range(value, rule, 3, Tensor::from_vector(std::vector<float>{2, 4}), {velocity}, copies);
  batch.finish();
  // Keras SGD momentum: v = 0.9 v - lr g; w += v.
  EXPECT_EQ(value.to_vector<float>(), (std::vector<float>{1, 1, 1, 0, -1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(velocity.to_vector<float>(), (std::vector<float>{0, 0, 0, -1, -2, 0, 0, 0, 0, 0}));
  EXPECT_EQ(other_value.to_vector<float>(), (std::vector<float>{7, 7, 7, 0, -1, 7, 7, 7, 7, 7}));
  EXPECT_EQ(other_velocity.to_vector<float>(), (std::vector<float>{7, 7, 7, -1, -2, 7, 7, 7, 7, 7}));
}

TEST_F(ShardedUpdates, ReplicasShardsCoverEverySumExactlyOnce) {
  distribute::MirroredStrategy strategy(cpus(3));
  // Odd sizes (the buckets are padded to a multiple of 3) and one gradient above
  // kOwnShardBucketBytes (reduce-scattered where it lies).
  const std::vector<int64_t> sizes{5, 6, 7, 1, int64_t(distribute::kOwnShardBucketBytes / 4) + 1};
  for (size_t bucket_bytes : {size_t(1), size_t(24), distribute::kDefaultGradientBucketBytes}) {
    std::vector<VariablePtr> vars;
    {
      auto scope = strategy.scope();
      for (size_t k = 0; k < sizes.size(); ++k) {
        VariableSpec spec;
        spec.name = "w" + std::to_string(k);
        spec.shape = Shape{sizes[k]};
        spec.initial_value = full(Shape{sizes[k]}, double(k + 1));
        vars.push_back(create_variable(spec));
      }
    }
    std::vector<std::vector<Gradient>> grads(3);
    std::vector<int> accepted(3, 0);
    strategy.run_replicas([&](int r) {
      accepted[size_t(r)] = vars[0]->accepts_gradient_shards();
      GradientTape tape;
      Tensor loss;
      for (const VariablePtr& v : vars) {
        Tensor term = reduce_sum(v->value() * v->value()) * double(r + 1);
        loss = loss.defined() ? loss + term : term;
      }
      grads[size_t(r)] = distribute::compute_reduced_gradients(
          tape, loss, vars, bucket_bytes, distribute::GradientReduction::kShardWhereAccepted);
    });
    EXPECT_EQ(accepted, (std::vector<int>{1, 1, 1}));
    for (size_t k = 0; k < vars.size(); ++k) {
      SCOPED_TRACE("bucket " + std::to_string(bucket_bytes) + " var " + std::to_string(k));
      // d/dw (w^2 (r+1)) summed over r = 1, 2, 3: 2w * 6 = 12 (k+1), each element once.
      std::vector<int> seen(size_t(sizes[k]), 0);
      for (int r = 0; r < 3; ++r) {
        const Gradient& g = grads[size_t(r)][k];
        ASSERT_TRUE(g.is_shard());
        EXPECT_EQ(g.shape(), vars[k]->shape());
        const std::vector<float> values = g.numbers().to_vector<float>();
        for (size_t i = 0; i < values.size(); ++i) {
          EXPECT_EQ(values[i], 12.0f * float(k + 1));
          ++seen[size_t(g.shard_begin()) + i];
        }
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), sizes[k]);
    }
  }
}

TEST_F(ShardedUpdates, OnlyMirroredVariablesOfThisProcessAcceptShards) {
  distribute::MirroredStrategy mirrored(cpus(3));
  distribute::CentralStorageStrategy central(cpus(3));
  VariableSpec spec;
  spec.shape = Shape{4};
  spec.initial_value = zeros({4});
  VariablePtr m, c;
  {
    auto scope = mirrored.scope();
    m = create_variable(spec);
  }
  {
    auto scope = central.scope();
    c = create_variable(spec);
  }
  EXPECT_FALSE(m->accepts_gradient_shards());  // cross-replica context: nobody else updates
  std::vector<int> seen(3, -1);
  mirrored.run_replicas([&](int r) { seen[size_t(r)] = m->accepts_gradient_shards(); });
  EXPECT_EQ(seen, (std::vector<int>{1, 1, 1}));
  central.run_replicas([&](int r) { seen[size_t(r)] = c->accepts_gradient_shards(); });
  EXPECT_EQ(seen, (std::vector<int>{0, 0, 0}));  // one central copy: whole gradients
}

// The small classifier of the strategy tests, compiled with `make_optimizer()`.
std::shared_ptr<Sequential> classifier(const std::function<std::shared_ptr<optimizers::Optimizer>()>& make_optimizer) {
  set_random_seed(1234);
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Conv2D>(4, 3), std::make_shared<ReLU>(), std::make_shared<Flatten>(),
      std::make_shared<Dense>(8, "relu"), std::make_shared<Dense>(3)});
  model->build({-1, 6, 6, 1});
  model->compile(CompileOptions()
                     .optimizer(make_optimizer())
                     .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(true)));
  return model;
}

struct OptimizerCase {
  std::string name;
  std::function<std::shared_ptr<optimizers::Optimizer>()> make;
};
void PrintTo(const OptimizerCase& c, std::ostream* os) { *os << c.name; }

class ShardedFit : public ShardedUpdates, public ::testing::WithParamInterface<OptimizerCase> {};

TEST_P(ShardedFit, MatchesNoStrategyWithEveryCopyIdentical) {
  const ClassifierData d = classifier_data(48);
  const FitOptions fit = FitOptions().epochs(2).batch_size(12).shuffle(false).verbose(0);
  auto reference = classifier(GetParam().make);
  reference->fit(d.x, d.y, fit);

  distribute::MirroredStrategy strategy(cpus(3));
  std::shared_ptr<Sequential> model;
  {
    auto scope = strategy.scope();
    model = classifier(GetParam().make);
  }
  model->fit(d.x, d.y, fit);
  expect_weights_near(model->get_weights(), reference->get_weights(), 1e-5);

  // Every replica wrote its range into the others' copies: weights and slots are bit-identical.
  std::vector<VariablePtr> all = model->trainable_variables();
  for (const VariablePtr& v : model->optimizer()->variables()) all.push_back(v);
  size_t mirrored = 0;
  for (const VariablePtr& v : all) {
    const auto* m = dynamic_cast<const distribute::MirroredVariable*>(v.get());
    if (m == nullptr) continue;
    ++mirrored;
    const std::vector<float> first = m->components()[0]->value().cast(float32).to_vector<float>();
    for (int c = 1; c < m->num_copies(); ++c) {
      EXPECT_EQ(m->components()[size_t(c)]->value().cast(float32).to_vector<float>(), first)
          << v->name() << " copy " << c;
    }
  }
  EXPECT_GE(mirrored, model->trainable_variables().size());
}

INSTANTIATE_TEST_SUITE_P(
    Optimizers, ShardedFit,
    ::testing::Values(
        OptimizerCase{"SgdMomentumClipnorm",
                      [] {
                        return std::make_shared<optimizers::SGD>(
                            0.1, optimizers::SGDOptions().momentum(0.9).clipnorm(0.05));
                      }},
        OptimizerCase{"AdamGlobalClipnorm",
                      [] {
                        return std::make_shared<optimizers::Adam>(
                            0.01, optimizers::AdamOptions().global_clipnorm(0.1));
                      }},
        OptimizerCase{"AdamWWeightDecay", [] { return std::make_shared<optimizers::AdamW>(0.01, 0.1); }},
        OptimizerCase{"LossScaledSgd",
                      [] {
                        return std::make_shared<optimizers::LossScaleOptimizer>(
                            std::make_shared<optimizers::SGD>(0.1, 0.9),
                            optimizers::LossScaleOptimizerOptions().initial_scale(1024));
                      }}),
    [](const ::testing::TestParamInfo<OptimizerCase>& info) { return info.param.name; });

}  // namespace
}  // namespace strata::testing
