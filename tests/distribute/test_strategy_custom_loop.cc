// Custom training loops (TensorFlow's strategy.run / strategy.reduce pattern): a step written
// with GradientTape and Optimizer::apply_gradients, run on every replica of a strategy with the
// loss scaled by the replica's share of the global batch (compute_average_loss), must give the
// weights of the same steps without a strategy on the whole batch; strategy.reduce and
// ReplicaContext collectives combine per-replica values as TensorFlow does.
#include "framework/strategy/replica_context.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {
namespace {

using distribute::PerReplica;
using distribute::ReplicaContext;

// How each replica scales its loss so that the replicas' gradients sum to the global batch's.
enum class Scaling {
  kBatchFraction,  // mean over the replica's samples * ReplicaContext::batch_fraction()
  kGlobalBatch,    // sum over the replica's samples / the global batch size
};

struct LoopResult {
  std::vector<Tensor> weights;
  std::vector<double> losses;  // one per step: the global batch's mean loss
  int64_t iterations = 0;
};

data::Dataset dataset(int64_t samples, int64_t batch) {
  const ClassifierData d = classifier_data(samples, 3);
  return data::Dataset::from_tensor_slices({d.x, d.y}).batch(batch);
}

// The reference: the same steps on whole batches, no strategy.
LoopResult reference_loop(const data::Dataset& ds) {
  auto model = small_classifier();
  auto opt = std::make_shared<optimizers::SGD>(0.1, 0.9);
  const losses::SparseCategoricalCrossentropy loss_fn(/*from_logits=*/true);
  LoopResult out;
  auto it = ds.make_iterator();
  while (std::optional<data::Element> b = it->next()) {
    GradientTape tape;
    const Tensor logits = (*model)((*b)[0], /*training=*/true);
    const Tensor loss = loss_fn((*b)[1], logits);
    const std::vector<VariablePtr> vars = model->trainable_variables();
    const std::vector<Tensor> grads = tape.gradient(loss, vars);
    opt->apply_gradients(grads, vars);
    out.losses.push_back(loss.item<double>());
  }
  out.weights = model->get_weights();
  out.iterations = opt->iteration_count();
  return out;
}

LoopResult strategy_loop(distribute::Strategy& strategy, const data::Dataset& ds, Scaling scaling) {
  std::shared_ptr<Sequential> model;
  std::shared_ptr<optimizers::Optimizer> opt;
  {
    auto scope = strategy.scope();
    model = small_classifier();
    opt = std::make_shared<optimizers::SGD>(0.1, 0.9);
  }
  const losses::SparseCategoricalCrossentropy per_sample(/*from_logits=*/true,
                                                         losses::Reduction::kNone);
  LoopResult out;
  auto it = strategy.experimental_distribute_dataset(ds).make_iterator();
  while (std::optional<distribute::DistributedBatch> batch = it->next()) {
    const int64_t global = batch->global_size;
    const PerReplica losses = strategy.run(
        [&](const data::Element& b) {
          ReplicaContext* replica = distribute::current_replica_context();
          GradientTape tape;
          const Tensor logits = (*model)(b[0], /*training=*/true);
          const Tensor l = per_sample(b[1], logits);
          const Tensor loss = scaling == Scaling::kBatchFraction
                                  ? reduce_mean(l) * replica->batch_fraction()
                                  : reduce_sum(l) * (1.0 / double(global));
          const std::vector<VariablePtr> vars = model->trainable_variables();
          const std::vector<Tensor> grads = tape.gradient(loss, vars);
          opt->apply_gradients(grads, vars);
          return loss;
        },
        *batch);
    EXPECT_EQ(losses.values.size(), size_t(strategy.num_replicas_in_sync()));
    out.losses.push_back(strategy.reduce(ReduceOp::kSum, losses).item<double>());
  }
  out.weights = model->get_weights();
  out.iterations = opt->iteration_count();
  return out;
}

void expect_same_loop(const LoopResult& got, const LoopResult& want) {
  expect_weights_near(got.weights, want.weights, 1e-5);
  EXPECT_EQ(got.iterations, want.iterations);
  ASSERT_EQ(got.losses.size(), want.losses.size());
  for (size_t s = 0; s < want.losses.size(); ++s) {
    EXPECT_NEAR(got.losses[s], want.losses[s], 1e-5 * std::fabs(want.losses[s])) << "step " << s;
  }
}

class StrategyCustomLoop : public ::testing::Test {
 protected:
  void SetUp() override { config::set_logical_cpu_devices(4); }
  void TearDown() override { config::set_logical_cpu_devices(1); }
};

TEST_F(StrategyCustomLoop, MirroredStepsMatchTheSameStepsWithoutStrategy) {
  // 40 samples in batches of 16: 16, 16, 8, each split 2 ways.
  const data::Dataset ds = dataset(40, 16);
  const LoopResult reference = reference_loop(ds);
  ASSERT_EQ(reference.losses.size(), 3u);
  ASSERT_EQ(reference.iterations, 3);
  // The steps changed the weights (so agreeing with the reference means something).
  const std::vector<Tensor> initial = small_classifier()->get_weights();
  EXPECT_NE(initial[0].to_vector<float>(), reference.weights[0].to_vector<float>());
  for (Scaling scaling : {Scaling::kBatchFraction, Scaling::kGlobalBatch}) {
    SCOPED_TRACE(scaling == Scaling::kBatchFraction ? "batch_fraction" : "1 / global batch");
    distribute::MirroredStrategy strategy(cpus(2));
    expect_same_loop(strategy_loop(strategy, ds, scaling), reference);
  }
}

TEST_F(StrategyCustomLoop, StandInReplicaOfAPartialBatchCountsForNothing) {
  // 35 samples in batches of 8 over four replicas: the last batch (3 samples) leaves replica 3
  // with a stand-in whose loss is scaled by a batch fraction of 0.
  const data::Dataset ds = dataset(35, 8);
  const LoopResult reference = reference_loop(ds);
  distribute::MirroredStrategy strategy(cpus(4));
  expect_same_loop(strategy_loop(strategy, ds, Scaling::kBatchFraction), reference);
}

TEST_F(StrategyCustomLoop, CentralStorageStepsMatchTheSameStepsWithoutStrategy) {
  const data::Dataset ds = dataset(37, 8);  // last batch of 5: 2/1/1/1
  const LoopResult reference = reference_loop(ds);
  distribute::CentralStorageStrategy strategy(cpus(4));
  expect_same_loop(strategy_loop(strategy, ds, Scaling::kBatchFraction), reference);
}

// ---- strategy.reduce ----

TEST_F(StrategyCustomLoop, ReduceCombinesPerReplicaValues) {
  distribute::MirroredStrategy strategy(cpus(2));
  PerReplica v;
  v.values = {Tensor::from_vector<float>({1, 2}, Shape{2}).to(Device::cpu(0)),
              Tensor::from_vector<float>({3, 4}, Shape{2}).to(Device::cpu(1))};
  // Without an axis: elementwise over the replicas.
  EXPECT_EQ(strategy.reduce(ReduceOp::kSum, v).to_vector<float>(), (std::vector<float>{4, 6}));
  EXPECT_EQ(strategy.reduce(ReduceOp::kMean, v).to_vector<float>(), (std::vector<float>{2, 3}));
  // Along axis 0 the replicas' values may differ in length; kMean weights by it.
  PerReplica rows;
  rows.values = {Tensor::from_vector<float>({1, 2, 3, 4}, Shape{2, 2}).to(Device::cpu(0)),
                 Tensor::from_vector<float>({5, 6}, Shape{1, 2}).to(Device::cpu(1))};
  const Tensor sum = strategy.reduce(ReduceOp::kSum, rows, 0);
  EXPECT_EQ(sum.shape(), Shape{2});
  EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{9, 12}));
  const Tensor mean = strategy.reduce(ReduceOp::kMean, rows, 0);
  EXPECT_EQ(mean.shape(), Shape{2});
  EXPECT_EQ(mean.to_vector<float>(), (std::vector<float>{3, 4}));
  // Along axis 1 of the same values: each value's row sums, then over replicas.
  PerReplica cols;
  cols.values = {Tensor::from_vector<float>({1, 2, 3, 4}, Shape{2, 2}),
                 Tensor::from_vector<float>({5, 6, 7, 8}, Shape{2, 2})};
  EXPECT_EQ(strategy.reduce(ReduceOp::kSum, cols, 1).to_vector<float>(), (std::vector<float>{14, 22}));
  EXPECT_EQ(strategy.reduce(ReduceOp::kMean, cols, 1).to_vector<float>(), (std::vector<float>{3.5, 5.5}));

  // What run() returns, reduced: replica r returns r + 1 repeated r + 1 times.
  distribute::MirroredStrategy four(cpus(4));
  const PerReplica ragged = four.run([] {
    const int r = distribute::current_replica_context()->replica_id_in_sync_group();
    return full(Shape{r + 1}, double(r + 1));
  });
  EXPECT_EQ(four.reduce(ReduceOp::kSum, ragged, 0).item<float>(), 1.0f + 4 + 9 + 16);
  EXPECT_EQ(four.reduce(ReduceOp::kMean, ragged, 0).item<float>(), 30.0f / 10.0f);

  // A single value (the default strategy's run result) is reduced on its own.
  const Tensor one = Tensor::from_vector<float>({2, 4}, Shape{2});
  EXPECT_EQ(strategy.reduce(ReduceOp::kSum, one).to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(strategy.reduce(ReduceOp::kMean, one, 0).item<float>(), 3.0f);

  expect_error<ValueError>([&] { strategy.reduce(ReduceOp::kMax, v); }, {"kSum", "kMean"});
  expect_error<ValueError>([&] { strategy.reduce(ReduceOp::kSum, v, 1); }, {"axis 1"});
  PerReplica mismatched;
  mismatched.values = {zeros(Shape{2}), zeros(Shape{3})};
  EXPECT_THROW(strategy.reduce(ReduceOp::kSum, mismatched), ShapeError);
}

// ---- ReplicaContext collectives inside run ----

TEST_F(StrategyCustomLoop, ReplicaContextCollectivesGiveEveryReplicaTheSameResult) {
  distribute::MirroredStrategy strategy(cpus(4));
  struct Seen {
    Tensor sum, mean, max, min, broadcast;
    Device device;
  };
  std::vector<Seen> seen(4);
  strategy.run([&] {
    ReplicaContext* c = distribute::current_replica_context();
    const int r = c->replica_id_in_sync_group();
    Seen& s = seen[size_t(r)];
    s.device = c->device();
    const Tensor mine = Tensor::from_vector<float>({float(r + 1), float(10 * (r + 1)), -float(r)}, Shape{3});
    s.sum = mine.clone();
    c->all_reduce(s.sum, ReduceOp::kSum);
    s.mean = mine.clone();
    c->all_reduce(s.mean, ReduceOp::kMean);
    s.max = mine.clone();
    c->all_reduce(s.max, ReduceOp::kMax);
    s.min = mine.clone();
    c->all_reduce(s.min, ReduceOp::kMin);
    s.broadcast = mine.clone();
    c->broadcast(s.broadcast, 2);
    c->barrier();
    return s.sum;
  });
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("replica " + std::to_string(r));
    const Seen& s = seen[size_t(r)];
    EXPECT_EQ(s.device, Device::cpu(r));
    EXPECT_EQ(s.sum.to_vector<float>(), (std::vector<float>{10, 100, -6}));
    EXPECT_EQ(s.mean.to_vector<float>(), (std::vector<float>{2.5, 25, -1.5}));
    EXPECT_EQ(s.max.to_vector<float>(), (std::vector<float>{4, 40, 0}));
    EXPECT_EQ(s.min.to_vector<float>(), (std::vector<float>{1, 10, -3}));
    EXPECT_EQ(s.broadcast.to_vector<float>(), (std::vector<float>{3, 30, -2}));
  }
}

// The gradient of every replica's scaled loss, all-reduced in the step, equals the global
// batch's gradient: the same as the mean loss's gradient over the whole batch.
TEST_F(StrategyCustomLoop, AllReducedGradientsEqualTheGlobalBatchGradient) {
  const data::Dataset ds = dataset(16, 16);
  const data::Element whole = *ds.make_iterator()->next();
  auto reference = small_classifier();
  const losses::SparseCategoricalCrossentropy loss_fn(true);
  std::vector<Tensor> want;
  {
    GradientTape tape;
    const Tensor loss = loss_fn(whole[1], (*reference)(whole[0], true));
    want = tape.gradient(loss, reference->trainable_variables());
  }
  distribute::MirroredStrategy strategy(cpus(4));
  std::shared_ptr<Sequential> model;
  {
    auto scope = strategy.scope();
    model = small_classifier();
  }
  const distribute::DistributedBatch batch = strategy.split_batch(whole, 0, "test");
  std::vector<std::vector<Tensor>> got(4);
  strategy.run(
      [&](const data::Element& b) {
        ReplicaContext* c = distribute::current_replica_context();
        GradientTape tape;
        const Tensor loss = loss_fn(b[1], (*model)(b[0], true)) * c->batch_fraction();
        std::vector<Tensor> grads = tape.gradient(loss, model->trainable_variables());
        for (Tensor& g : grads) c->all_reduce(g, ReduceOp::kSum);
        got[size_t(c->replica_id_in_sync_group())] = grads;
        return loss;
      },
      batch);
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("replica " + std::to_string(r));
    expect_weights_near(got[size_t(r)], want, 1e-5, 1e-6);
  }
}

}  // namespace
}  // namespace strata::testing
