// The Strategy API as a user sees it (tf.distribute semantics): which kind of variable each
// strategy makes, how scope() nests, and how global batches are split over replicas
// (experimental_distribute_dataset, distribute_datasets_from_function, fit's batch checks).
#include <typeinfo>

#include "distribute/variables/central_variable.h"
#include "distribute/variables/replicated_variable.h"
#include "framework/strategy/replica_context.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {
namespace {

using distribute::CentralStorageStrategy;
using distribute::CentralVariable;
using distribute::DistributedBatch;
using distribute::MirroredStrategy;
using distribute::MirroredVariable;
using distribute::OneDeviceStrategy;
using distribute::ReplicatedVariable;
using distribute::SyncOnReadVariable;

std::shared_ptr<Sequential> classifier_in(distribute::Strategy* strategy, Norm norm = Norm::kNone) {
  if (strategy == nullptr) return small_classifier("sgd", norm);
  auto scope = strategy->scope();
  return small_classifier("sgd", norm);
}

// One training step (8 samples, batch 8): creates the optimizer slots and the compiled metrics.
void one_step(Sequential& model) {
  const ClassifierData d = classifier_data(8);
  model.fit(d.x, d.y, FitOptions().epochs(1).batch_size(8).shuffle(false).verbose(0));
}

std::vector<float> floats_of(const Tensor& t) { return t.cast(float32).to_vector<float>(); }

// A MirroredVariable with one copy per replica, copy r on /cpu:r, every copy equal to copy 0.
void expect_mirrored(const VariablePtr& v, int replicas) {
  SCOPED_TRACE(v->name());
  auto m = std::dynamic_pointer_cast<MirroredVariable>(v);
  ASSERT_NE(m, nullptr) << "a " << typeid(*v).name() << ", not a MirroredVariable";
  ASSERT_EQ(m->num_copies(), replicas);
  EXPECT_TRUE(m->has_replica_copies());
  const std::vector<float> first = floats_of(m->components()[0]->value());
  for (int r = 0; r < replicas; ++r) {
    const VariablePtr& c = m->components()[size_t(r)];
    EXPECT_EQ(typeid(*c), typeid(Variable)) << "copy " << r;
    EXPECT_EQ(c->device(), Device::cpu(r)) << "copy " << r;
    EXPECT_EQ(c->value().device(), Device::cpu(r)) << "copy " << r;
    EXPECT_EQ(floats_of(c->value()), first) << "copy " << r << " differs from copy 0";
  }
  // Cross-replica reads give copy 0.
  EXPECT_EQ(floats_of(m->value()), first);
}

void expect_plain(const VariablePtr& v, const Device& device) {
  SCOPED_TRACE(v->name());
  EXPECT_EQ(typeid(*v), typeid(Variable)) << "a " << typeid(*v).name();
  EXPECT_FALSE(v->has_replica_copies());
  EXPECT_EQ(v->device(), device);
  EXPECT_EQ(v->value().device(), device);
}

class StrategyApi : public ::testing::Test {
 protected:
  void SetUp() override { config::set_logical_cpu_devices(4); }
  void TearDown() override { config::set_logical_cpu_devices(1); }
};

// ---- variable types ----

TEST_F(StrategyApi, MirroredStrategyMakesMirroredWeightsSlotsAndSyncOnReadMetrics) {
  MirroredStrategy strategy(cpus(2));
  auto model = classifier_in(&strategy);
  EXPECT_EQ(model->distribute_strategy(), &strategy);
  const std::vector<VariablePtr> weights = model->weights();
  ASSERT_EQ(weights.size(), 6u);  // conv2d kernel/bias, two dense kernel/bias
  for (const VariablePtr& w : weights) expect_mirrored(w, 2);
  const std::vector<Tensor> initial = model->get_weights();

  one_step(*model);

  // The step changed the weights, identically on both copies.
  for (const VariablePtr& w : weights) expect_mirrored(w, 2);
  const std::vector<Tensor> trained = model->get_weights();
  EXPECT_NE(floats_of(trained[0]), floats_of(initial[0])) << "one fit step did not train";

  // The optimizer's step counter and its slots (SGD momentum) are mirrored too.
  const auto& opt = model->optimizer();
  EXPECT_EQ(opt->iteration_count(), 1);
  const std::vector<VariablePtr> opt_vars = opt->variables();
  ASSERT_EQ(opt_vars.size(), 1 + weights.size()) << "iterations + one momentum slot per weight";
  for (const VariablePtr& v : opt_vars) expect_mirrored(v, 2);
  auto iterations = std::dynamic_pointer_cast<MirroredVariable>(opt->iterations());
  ASSERT_NE(iterations, nullptr);
  for (const VariablePtr& c : iterations->components()) EXPECT_EQ(c->value().item<int64_t>(), 1);
  for (const VariablePtr& w : weights) {
    const VariablePtr slot = opt->get_slot(w, "momentum");
    ASSERT_NE(slot, nullptr) << w->name();
    expect_mirrored(slot, 2);
    double sum_abs = 0;
    for (float f : floats_of(slot->value())) sum_abs += std::fabs(f);
    EXPECT_GT(sum_abs, 0.0) << "momentum of " << w->name() << " was not updated";
  }

  // Metric state: one copy per replica, summed when read.
  const auto metrics = model->metrics();
  ASSERT_EQ(metrics.size(), 2u);  // loss tracker + accuracy
  for (const auto& m : metrics) {
    ASSERT_FALSE(m->variables().empty()) << m->name();
    for (const VariablePtr& v : m->variables()) {
      SCOPED_TRACE(v->name());
      auto s = std::dynamic_pointer_cast<SyncOnReadVariable>(v);
      ASSERT_NE(s, nullptr) << "a " << typeid(*v).name() << ", not a SyncOnReadVariable";
      ASSERT_EQ(s->num_copies(), 2);
      EXPECT_EQ(s->components()[0]->device(), Device::cpu(0));
      EXPECT_EQ(s->components()[1]->device(), Device::cpu(1));
    }
  }
  // Each replica counted its own 4 samples; a read sums them.
  const auto& accuracy = metrics[1];
  int counts = 0;
  for (const VariablePtr& v : accuracy->variables()) {
    if (v->name().find("count") == std::string::npos) continue;
    ++counts;
    auto s = std::dynamic_pointer_cast<SyncOnReadVariable>(v);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->components()[0]->value().item<double>(), 4.0);
    EXPECT_EQ(s->components()[1]->value().item<double>(), 4.0);
    EXPECT_EQ(s->value().item<double>(), 8.0);
  }
  EXPECT_EQ(counts, 1) << "the accuracy metric keeps a count";
}

TEST_F(StrategyApi, CentralStorageStrategyMakesCentralVariablesOnTheParameterDevice) {
  CentralStorageStrategy strategy(cpus(2));
  EXPECT_EQ(strategy.parameter_device(), Device::cpu(0));
  auto model = classifier_in(&strategy);
  EXPECT_EQ(model->distribute_strategy(), &strategy);
  auto expect_central = [](const VariablePtr& v) {
    SCOPED_TRACE(v->name());
    EXPECT_NE(std::dynamic_pointer_cast<CentralVariable>(v), nullptr)
        << "a " << typeid(*v).name() << ", not a CentralVariable";
    EXPECT_FALSE(v->has_replica_copies());
    EXPECT_EQ(v->device(), Device::cpu(0));
    EXPECT_EQ(v->value().device(), Device::cpu(0));
  };
  for (const VariablePtr& w : model->weights()) expect_central(w);
  const std::vector<Tensor> initial = model->get_weights();
  one_step(*model);
  EXPECT_NE(floats_of(model->get_weights()[0]), floats_of(initial[0])) << "one fit step did not train";
  EXPECT_EQ(model->optimizer()->iteration_count(), 1);
  const std::vector<VariablePtr> opt_vars = model->optimizer()->variables();
  ASSERT_EQ(opt_vars.size(), 7u);
  for (const VariablePtr& v : opt_vars) expect_central(v);
  for (const auto& m : model->metrics()) {
    for (const VariablePtr& v : m->variables()) {
      auto s = std::dynamic_pointer_cast<SyncOnReadVariable>(v);
      ASSERT_NE(s, nullptr) << v->name();
      EXPECT_EQ(s->num_copies(), 2) << v->name();
    }
  }
}

TEST_F(StrategyApi, OneDeviceStrategyPlacesPlainVariablesOnItsDevice) {
  OneDeviceStrategy strategy("/cpu:1");
  auto model = classifier_in(&strategy);
  EXPECT_EQ(model->distribute_strategy(), &strategy);
  for (const VariablePtr& w : model->weights()) expect_plain(w, Device::cpu(1));
  one_step(*model);
  EXPECT_EQ(model->optimizer()->iteration_count(), 1);
  for (const VariablePtr& v : model->optimizer()->variables()) expect_plain(v, Device::cpu(1));
  for (const auto& m : model->metrics()) {
    for (const VariablePtr& v : m->variables()) expect_plain(v, Device::cpu(1));
  }
}

TEST_F(StrategyApi, NoStrategyMakesPlainVariables) {
  auto model = classifier_in(nullptr);
  EXPECT_EQ(model->distribute_strategy(), nullptr);
  for (const VariablePtr& w : model->weights()) expect_plain(w, Device::cpu(0));
  one_step(*model);
  for (const VariablePtr& v : model->optimizer()->variables()) expect_plain(v, Device::cpu(0));
  for (const auto& m : model->metrics()) {
    for (const VariablePtr& v : m->variables()) expect_plain(v, Device::cpu(0));
  }
}

// ---- scope ----

VariablePtr make_variable(const std::string& name) {
  VariableSpec spec;
  spec.name = name;
  spec.shape = Shape{2};
  return create_variable(spec);
}

TEST_F(StrategyApi, ScopeIsReentrantAndRestoresTheDefaultStrategy) {
  MirroredStrategy strategy(cpus(2));
  EXPECT_FALSE(distribute::has_strategy());
  EXPECT_EQ(distribute::current_strategy(), nullptr);
  {
    auto outer = strategy.scope();
    EXPECT_TRUE(distribute::has_strategy());
    EXPECT_EQ(distribute::current_strategy(), &strategy);
    EXPECT_EQ(distribute::get_strategy().get(), &strategy);
    EXPECT_NE(std::dynamic_pointer_cast<MirroredVariable>(make_variable("outer")), nullptr);
    {
      auto inner = strategy.scope();  // the same strategy again: fine
      EXPECT_TRUE(distribute::has_strategy());
      EXPECT_EQ(distribute::get_strategy().get(), &strategy);
      EXPECT_NE(std::dynamic_pointer_cast<MirroredVariable>(make_variable("inner")), nullptr);
      {
        auto innermost = strategy.scope();
        EXPECT_EQ(distribute::current_strategy(), &strategy);
      }
    }
    // Leaving the inner scopes keeps the outer one active.
    EXPECT_TRUE(distribute::has_strategy());
    EXPECT_EQ(distribute::current_strategy(), &strategy);
    EXPECT_NE(std::dynamic_pointer_cast<MirroredVariable>(make_variable("outer_again")), nullptr);
  }
  EXPECT_FALSE(distribute::has_strategy());
  EXPECT_EQ(distribute::current_strategy(), nullptr);
  const VariablePtr after = make_variable("after");
  EXPECT_EQ(typeid(*after), typeid(Variable));

  // Outside every scope: the default strategy (one replica, plain variables).
  const auto def = distribute::get_strategy();
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(def->is_default());
  EXPECT_FALSE(strategy.is_default());
  EXPECT_EQ(def->num_replicas_in_sync(), 1);
  EXPECT_EQ(def->name(), "DefaultStrategy");
  EXPECT_EQ(distribute::get_strategy().get(), def.get()) << "the default strategy is one object";
  // Its run() is one call on this thread, without a replica context.
  int calls = 0;
  const distribute::PerReplica out = def->run([&] {
    ++calls;
    EXPECT_EQ(distribute::current_replica_context(), nullptr);
    return full(Shape{}, 3.0);
  });
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(out.values.size(), 1u);
  EXPECT_EQ(def->reduce(ReduceOp::kSum, out).item<float>(), 3.0f);
}

TEST_F(StrategyApi, AScopeOverLogicalCpusLeavesTheDefaultDeviceAlone) {
  // The scope makes the first replica's device the default only where that device has memory of
  // its own (a GPU: CudaTraining.MirroredStrategyScopeBuildsOnTheFirstGpu); logical CPU devices
  // share the host's, so a model built in the scope stays where the caller's device scope is.
  MirroredStrategy strategy({"/cpu:1", "/cpu:2"});
  {
    auto scope = strategy.scope();
    EXPECT_EQ(default_device(), Device::cpu(0));
    DeviceScope inner(Device::cpu(3));
    EXPECT_EQ(default_device(), Device::cpu(3));
  }
  EXPECT_EQ(default_device(), Device::cpu(0));
}

TEST_F(StrategyApi, EnteringAnotherStrategysScopeIsAStateErrorNamingBoth) {
  MirroredStrategy mirrored(cpus(2));
  CentralStorageStrategy central(cpus(2));
  {
    auto scope = mirrored.scope();
    expect_error<StateError>([&] { auto inner = central.scope(); },
                             {"MirroredStrategy", "CentralStorageStrategy"});
    // The failed entry left the outer scope as it was.
    EXPECT_EQ(distribute::current_strategy(), &mirrored);
    EXPECT_NE(std::dynamic_pointer_cast<MirroredVariable>(make_variable("v")), nullptr);
    // Another instance of the same class is a different strategy too.
    MirroredStrategy other(cpus(2));
    EXPECT_THROW({ auto inner = other.scope(); }, StateError);
    EXPECT_EQ(distribute::current_strategy(), &mirrored);
  }
  EXPECT_FALSE(distribute::has_strategy());
  {
    auto scope = central.scope();
    expect_error<StateError>([&] { auto inner = mirrored.scope(); },
                             {"MirroredStrategy", "CentralStorageStrategy"});
  }
  EXPECT_FALSE(distribute::has_strategy());
}

TEST_F(StrategyApi, AModelBelongsToTheStrategyThatCreatedIt) {
  const ClassifierData d = classifier_data(8);
  MirroredStrategy mirrored(cpus(2));
  CentralStorageStrategy central(cpus(2));
  auto model = classifier_in(&mirrored);
  // fit() re-enters the model's strategy, which cannot nest in another strategy's scope.
  {
    auto scope = central.scope();
    expect_error<StateError>(
        [&] { model->fit(d.x, d.y, FitOptions().epochs(1).batch_size(8).verbose(0)); },
        {"MirroredStrategy", "CentralStorageStrategy"});
    expect_error<StateError>(
        [&] { model->compile(CompileOptions().optimizer("sgd").loss("mse")); },
        {"MirroredStrategy", "CentralStorageStrategy"});
  }
  EXPECT_EQ(model->distribute_strategy(), &mirrored);
  // fit() called outside any scope re-enters the model's own strategy.
  EXPECT_NO_THROW(model->fit(d.x, d.y, FitOptions().epochs(1).batch_size(8).verbose(0)));
  EXPECT_FALSE(distribute::has_strategy());

  // A model whose strategy is gone says so instead of touching dead replicas.
  std::shared_ptr<Sequential> orphan;
  {
    MirroredStrategy short_lived(cpus(2));
    orphan = classifier_in(&short_lived);
  }
  expect_error<StateError>(
      [&] { orphan->fit(d.x, d.y, FitOptions().epochs(1).batch_size(8).verbose(0)); },
      {"destroyed"});
}

TEST_F(StrategyApi, RunFromInsideAReplicaIsAStateErrorAndTheStrategyRecovers) {
  MirroredStrategy strategy(cpus(2));
  expect_error<StateError>(
      [&] {
        strategy.run([&] {
          strategy.run([] { return full(Shape{}, 1.0); });
          return full(Shape{}, 1.0);
        });
      },
      {"MirroredStrategy", "inside a replica"});
  // The strategy still works afterwards (its collectives were not left half-done).
  const distribute::PerReplica out = strategy.run([] {
    Tensor t = full(Shape{}, 1.0 + distribute::current_replica_context()->replica_id_in_sync_group());
    distribute::current_replica_context()->all_reduce(t, ReduceOp::kSum);
    return t;
  });
  ASSERT_EQ(out.values.size(), 2u);
  for (const Tensor& v : out.values) EXPECT_EQ(v.item<float>(), 3.0f);
}

TEST_F(StrategyApi, ReplicasRunInsideTheScopeOnTheirDevices) {
  MirroredStrategy strategy(cpus(4));
  std::vector<int> ids(4, -1);
  std::vector<Device> devices(4);
  std::vector<int> in_scope(4, 0);
  const distribute::PerReplica out = strategy.run([&] {
    distribute::ReplicaContext* c = distribute::current_replica_context();
    EXPECT_NE(c, nullptr);
    const int r = c->replica_id_in_sync_group();
    EXPECT_EQ(c->num_replicas_in_sync(), 4);
    EXPECT_DOUBLE_EQ(c->batch_fraction(), 0.25);  // run() without a batch: equal shares
    ids[size_t(r)] = r;
    devices[size_t(r)] = c->device();
    in_scope[size_t(r)] = distribute::current_strategy() == &strategy;
    return zeros(Shape{1});  // made on the replica's device
  });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(ids[size_t(r)], r);
    EXPECT_EQ(devices[size_t(r)], Device::cpu(r));
    EXPECT_TRUE(in_scope[size_t(r)]) << "replica " << r;
    EXPECT_EQ(out.values[size_t(r)].device(), Device::cpu(r)) << "replica " << r;
  }
  EXPECT_FALSE(distribute::has_strategy());
}

// ---- batch splitting ----

// x[i] = (i, -i) and y[i] = i, so every sample says where it came from.
data::Dataset numbered(int64_t n, int64_t batch) {
  std::vector<float> xs;
  std::vector<int64_t> ys;
  for (int64_t i = 0; i < n; ++i) {
    xs.push_back(float(i));
    xs.push_back(-float(i));
    ys.push_back(i);
  }
  return data::Dataset::from_tensor_slices(
             {Tensor::from_vector(xs, Shape{n, 2}), Tensor::from_vector(ys, Shape{n})})
      .batch(batch);
}

TEST_F(StrategyApi, FitRejectsAGlobalBatchThatDoesNotDivideOverTheReplicas) {
  MirroredStrategy strategy(cpus(4));
  auto model = classifier_in(&strategy);
  const ClassifierData d = classifier_data(40);
  expect_error<ValueError>(
      [&] { model->fit(d.x, d.y, FitOptions().epochs(1).batch_size(10).verbose(0)); },
      {"10", "4"});
  // A batch size that divides is fine.
  EXPECT_NO_THROW(model->fit(d.x, d.y, FitOptions().epochs(1).batch_size(8).verbose(0)));
}

TEST_F(StrategyApi, DistributedDatasetSplitsEachBatchEvenlyAndInOrder) {
  MirroredStrategy strategy(cpus(4));
  const distribute::DistributedDataset dist = strategy.experimental_distribute_dataset(numbered(37, 8));
  for (int pass = 0; pass < 2; ++pass) {  // every make_iterator() is a fresh pass
    SCOPED_TRACE("pass " + std::to_string(pass));
    auto it = dist.make_iterator();
    int64_t next_sample = 0;
    int batches = 0;
    while (std::optional<DistributedBatch> b = it->next()) {
      SCOPED_TRACE("batch " + std::to_string(batches));
      const bool last = batches == 4;
      const std::vector<int64_t> sizes = last ? std::vector<int64_t>{2, 1, 1, 1}
                                              : std::vector<int64_t>{2, 2, 2, 2};
      const int64_t global = last ? 5 : 8;
      EXPECT_EQ(b->global_size, global);
      EXPECT_EQ(b->sizes, sizes);
      ASSERT_EQ(b->per_replica.size(), 4u);
      ASSERT_EQ(b->fractions.size(), 4u);
      for (size_t r = 0; r < 4; ++r) {
        EXPECT_DOUBLE_EQ(b->fractions[r], double(sizes[r]) / double(global)) << "replica " << r;
        const data::Element& part = b->per_replica[r];
        ASSERT_EQ(part.size(), 2u);
        EXPECT_EQ(part[0].shape(), (Shape{sizes[r], 2}));
        EXPECT_EQ(part[0].device(), Device::cpu(int(r)));
        EXPECT_EQ(part[1].device(), Device::cpu(int(r)));
        // Concatenated in replica order, the parts are the batch in order.
        const std::vector<int64_t> ys = part[1].to_vector<int64_t>();
        const std::vector<float> xs = part[0].to_vector<float>();
        for (size_t k = 0; k < ys.size(); ++k) {
          EXPECT_EQ(ys[k], next_sample);
          EXPECT_EQ(xs[2 * k], float(next_sample));
          EXPECT_EQ(xs[2 * k + 1], -float(next_sample));
          ++next_sample;
        }
      }
      ++batches;
    }
    EXPECT_EQ(batches, 5);
    EXPECT_EQ(next_sample, 37);
  }
}

TEST_F(StrategyApi, ALastBatchSmallerThanTheReplicaCountGetsAStandIn) {
  MirroredStrategy strategy(cpus(4));
  // 35 samples in batches of 8: the last batch has 3 samples for 4 replicas.
  auto it = strategy.experimental_distribute_dataset(numbered(35, 8)).make_iterator();
  std::optional<DistributedBatch> last;
  int batches = 0;
  while (auto b = it->next()) {
    last = std::move(b);
    ++batches;
  }
  ASSERT_EQ(batches, 5);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->global_size, 3);
  EXPECT_EQ(last->sizes, (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_DOUBLE_EQ(last->fractions[0], 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(last->fractions[3], 0.0);
  // The stand-in is one real-looking sample so the replica can compute like the others.
  EXPECT_EQ(last->per_replica[3][0].dim(0), 1);
  EXPECT_EQ(last->per_replica[3][0].device(), Device::cpu(3));
  std::vector<int64_t> seen;
  for (size_t r = 0; r < 3; ++r) {
    for (int64_t y : last->per_replica[r][1].to_vector<int64_t>()) seen.push_back(y);
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{32, 33, 34}));

  // Running a step on it does not hang: every replica takes part in the collective, and the
  // stand-in's contribution, weighted by its fraction 0, counts for nothing.
  const distribute::PerReplica out = strategy.run(
      [](const data::Element& b) {
        distribute::ReplicaContext* c = distribute::current_replica_context();
        Tensor s = reduce_sum(cast(b[1], float32)) * (c->batch_fraction() > 0 ? 1.0 : 0.0);
        c->all_reduce(s, ReduceOp::kSum);
        return s;
      },
      *last);
  ASSERT_EQ(out.values.size(), 4u);
  for (const Tensor& v : out.values) EXPECT_EQ(v.item<float>(), 32.0f + 33.0f + 34.0f);
}

TEST_F(StrategyApi, DistributedDatasetRejectsAFullBatchThatDoesNotDivide) {
  MirroredStrategy strategy(cpus(4));
  auto it = strategy.experimental_distribute_dataset(numbered(40, 10)).make_iterator();
  expect_error<ValueError>([&] { it->next(); }, {"10", "4"});
}

TEST_F(StrategyApi, InputContextGivesThePerReplicaBatchSize) {
  MirroredStrategy strategy(cpus(4));
  std::optional<distribute::InputContext> seen;
  int calls = 0;
  const distribute::DistributedDataset dist =
      strategy.distribute_datasets_from_function([&](const distribute::InputContext& ctx) {
        seen = ctx;
        ++calls;
        return numbered(70, ctx.get_per_replica_batch_size(64));
      });
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->num_replicas_in_sync, 4);
  EXPECT_EQ(seen->num_input_pipelines, 1);
  EXPECT_EQ(seen->input_pipeline_id, 0);
  EXPECT_EQ(seen->get_per_replica_batch_size(64), 16);
  EXPECT_EQ(seen->get_per_replica_batch_size(4), 1);
  expect_error<ValueError>([&] { seen->get_per_replica_batch_size(10); }, {"10", "4"});

  // Per-replica batches of 16: 16, 16, 16, 16, then 6. Replica r takes the r-th batch of each
  // group of four; the last group has one real batch and three stand-ins.
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE("pass " + std::to_string(pass));
    auto it = dist.make_iterator();
    std::optional<DistributedBatch> first = it->next();
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->global_size, 64);
    EXPECT_EQ(first->sizes, (std::vector<int64_t>{16, 16, 16, 16}));
    for (size_t r = 0; r < 4; ++r) {
      EXPECT_DOUBLE_EQ(first->fractions[r], 0.25);
      EXPECT_EQ(first->per_replica[r][0].device(), Device::cpu(int(r)));
      const std::vector<int64_t> ys = first->per_replica[r][1].to_vector<int64_t>();
      ASSERT_EQ(ys.size(), 16u);
      for (size_t k = 0; k < 16; ++k) EXPECT_EQ(ys[k], int64_t(16 * r + k)) << "replica " << r;
    }
    std::optional<DistributedBatch> second = it->next();
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->global_size, 6);
    EXPECT_EQ(second->sizes, (std::vector<int64_t>{6, 0, 0, 0}));
    EXPECT_EQ(second->fractions, (std::vector<double>{1.0, 0.0, 0.0, 0.0}));
    ASSERT_EQ(second->per_replica.size(), 4u);
    const std::vector<int64_t> tail = second->per_replica[0][1].to_vector<int64_t>();
    EXPECT_EQ(tail, (std::vector<int64_t>{64, 65, 66, 67, 68, 69}));
    for (size_t r = 1; r < 4; ++r) {
      EXPECT_EQ(second->per_replica[r][0].dim(0), 1) << "stand-in of replica " << r;
      EXPECT_EQ(second->per_replica[r][0].device(), Device::cpu(int(r)));
    }
    EXPECT_FALSE(it->next().has_value());
  }
  EXPECT_EQ(calls, 1) << "one input pipeline in this process";

  // A function that asks for an uneven split gets the ValueError.
  expect_error<ValueError>(
      [&] {
        strategy.distribute_datasets_from_function([](const distribute::InputContext& ctx) {
          return numbered(70, ctx.get_per_replica_batch_size(10));
        });
      },
      {"10", "4"});
}

}  // namespace
}  // namespace strata::testing
