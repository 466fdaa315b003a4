// RemoteStep (distribute/parameter_server/wire/remote_step.h): a worker's step with one Read and
// one ApplyUpdate per ps, that still trains to the same weights as without a strategy and reads
// its own writes; a failed step sends nothing.
#include <string>
#include <vector>

#include "distribute/parameter_server/wire/remote_step.h"
#include "tests/distribute/two_ps_strategy.h"

namespace strata::testing {
namespace {

using distribute::AssignMode;
using distribute::RemoteReadPlan;
using distribute::RemoteStep;

constexpr int64_t kSteps = 4, kStepBatch = 8;

// Conv2D + BatchNormalization (moving statistics assigned every step) + Dense, Adam.
std::shared_ptr<Model> conv_bn_model() {
  set_random_seed(41);
  KerasTensor x = Input({6, 6, 1});
  KerasTensor h = Flatten()(BatchNormalization()(Conv2D(3, 3)(x)));
  auto model = std::make_shared<Model>(x, Dense(3)(h));
  model->compile(CompileOptions()
                     .optimizer(test_optimizer("adam"))
                     .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(true)));
  return model;
}

int64_t calls(TwoPsStrategy& s) { return s.ps(0).client->calls() + s.ps(1).client->calls(); }

TEST(RemoteStep, TrainsAsWithoutAStrategyWithOneReadAndOneWritePerPsAStep) {
  const ClassifierData d = classifier_data(kSteps * kStepBatch);
  const auto batch = [&](const Tensor& t, int64_t s) {
    return t.slice(s * kStepBatch, (s + 1) * kStepBatch);
  };
  std::shared_ptr<Model> plain = conv_bn_model();
  for (int64_t s = 0; s < kSteps; ++s) plain->train_on_batch(batch(d.x, s), batch(d.y, s));

  TwoPsStrategy strategy;
  std::shared_ptr<Model> remote;
  {
    auto scope = strategy.scope();
    remote = conv_bn_model();
  }
  auto plan = std::make_shared<RemoteReadPlan>();
  std::vector<int64_t> per_step;
  for (int64_t s = 0; s < kSteps; ++s) {
    const int64_t before = calls(strategy);
    RemoteStep step(plan);
    remote->train_on_batch(batch(d.x, s), batch(d.y, s));
    step.finish();
    per_step.push_back(calls(strategy) - before);
  }
  // Kernels, biases, gamma, beta, the moving mean and variance, as without a strategy.
  expect_weights_near(remote->get_weights(), plain->get_weights(), 1e-6, 1e-7);

  // Once the plan knows what a step reads: a Read and an ApplyUpdate per ps, and the step
  // count's FetchAdd; nothing else (a step of this model was ~30 RPCs one by one).
  for (int64_t s = 1; s < kSteps; ++s) EXPECT_EQ(per_step[size_t(s)], 2 + 2 + 1) << "step " << s;
  EXPECT_GT(per_step[0], per_step[1]);   // the first step learns the plan
  // Every variable updated once a step, BatchNorm's statistics assigned once a step.
  std::vector<VariablePtr> all = remote->trainable_variables();
  for (const VariablePtr& v : remote->non_trainable_variables()) all.push_back(v);
  for (const VariablePtr& v : all) {
    const auto [task, id] = strategy.placement(v->name());
    const distribute::HostedVariableCounters c = strategy.ps(task).server->counters(id);
    if (v->trainable()) {
      EXPECT_EQ(c.dense_updates, kSteps) << v->name();
    } else if (v->name().find("moving") != std::string::npos) {
      EXPECT_EQ(c.assigns, kSteps) << v->name();
    }
  }
}

TEST(RemoteStep, AStepReadsItsOwnAssignmentsAndUpdates) {
  Ps ps;
  auto w = std::make_shared<RemoteVariable>(
      VariableSpec{"w", {3}, float32, {}, tensor<float>({1, 2, 3}, {3})}, ps.client, "w");
  auto table = std::make_shared<RemoteVariable>(
      VariableSpec{"table", {4, 2}, float32, {}, zeros({4, 2})}, ps.client, "table");
  RemoteStep step(nullptr);
  EXPECT_EQ(w->value().to_vector<float>(), (std::vector<float>{1, 2, 3}));
  w->assign(tensor<float>({10, 20, 30}, {3}));
  EXPECT_EQ(w->value().to_vector<float>(), (std::vector<float>{10, 20, 30}));
  w->assign_add(tensor<float>({1, 1, 1}, {3}));
  w->assign_sub(tensor<float>({0, 2, 0}, {3}));
  EXPECT_EQ(w->value().to_vector<float>(), (std::vector<float>{11, 19, 31}));
  EXPECT_EQ(ps.client->read({"w"})[0].to_vector<float>(), (std::vector<float>{1, 2, 3}))
      << "assignments wait for the step's end";

  // An optimizer update: the next read sends the queue first (SGD, learning rate 1).
  OptimizerUpdate sgd;
  sgd.learning_rate = 1.0f;
  UpdateBatch batch;
  w->apply_update(VariableUpdate{sgd, Gradient(tensor<float>({1, 2, 3}, {3})), {}}, batch);
  batch.finish();
  EXPECT_EQ(w->value().to_vector<float>(), (std::vector<float>{10, 17, 28}));
  // Rows read by gather after an update of the table see it.
  table->apply_update(VariableUpdate{sgd, Gradient(ones({4, 2})), {}}, batch);
  batch.finish();
  EXPECT_EQ(table->gather(Tensor::from_vector(std::vector<int64_t>{2}, Shape{1}))
                .to_vector<float>(),
            (std::vector<float>{-1, -1}));
  // An assignment queued after an update of the same variable lands after it.
  w->apply_update(VariableUpdate{sgd, Gradient(ones({3})), {}}, batch);
  batch.finish();
  w->assign_add(tensor<float>({100, 100, 100}, {3}));
  step.finish();
  EXPECT_EQ(ps.client->read({"w"})[0].to_vector<float>(), (std::vector<float>{109, 116, 127}));
}

TEST(RemoteStep, AFailedStepSendsNothingItQueued) {
  Ps ps;
  auto w = std::make_shared<RemoteVariable>(
      VariableSpec{"w", {2}, float32, {}, ones({2})}, ps.client, "w");
  try {
    RemoteStep step(nullptr);
    w->assign(tensor<float>({5, 5}, {2}));
    OptimizerUpdate sgd;
    UpdateBatch batch;
    w->apply_update(VariableUpdate{sgd, Gradient(ones({2})), {}}, batch);
    batch.finish();
    throw ValueError("the step's own error");
  } catch (const ValueError&) {
  }
  EXPECT_EQ(RemoteStep::current(), nullptr);
  EXPECT_EQ(ps.client->read({"w"})[0].to_vector<float>(), (std::vector<float>{1, 1}));
  const distribute::HostedVariableCounters c = ps.server->counters("w");
  EXPECT_EQ(c.assigns + c.dense_updates, 0);
}

TEST(RemoteStep, ANestedStepJoinsTheOuterAndThePlanPrefetchesWhatWasRead) {
  Ps ps;
  auto w = std::make_shared<RemoteVariable>(
      VariableSpec{"w", {2}, float32, {}, ones({2})}, ps.client, "w");
  auto plan = std::make_shared<RemoteReadPlan>();
  {
    RemoteStep outer(plan);
    {
      RemoteStep inner(plan);
      EXPECT_EQ(RemoteStep::current(), &outer);
      w->assign(tensor<float>({2, 2}, {2}));
      inner.finish();   // the outer step sends it
    }
    EXPECT_EQ(ps.client->read({"w"})[0].to_vector<float>(), (std::vector<float>{1, 1}));
    EXPECT_EQ(w->value().to_vector<float>(), (std::vector<float>{2, 2}));
    outer.finish();
  }
  EXPECT_EQ(ps.client->read({"w"})[0].to_vector<float>(), (std::vector<float>{2, 2}));
  ASSERT_EQ(plan->reads().size(), 1u);
  EXPECT_EQ(plan->reads()[0].ids, std::vector<std::string>{"w"});
  // The next step reads "w" in its prefetch: value() makes no RPC.
  RemoteStep next(plan);
  const int64_t before = ps.client->calls();
  EXPECT_EQ(w->value().to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_EQ(ps.client->calls(), before);
}

}  // namespace
}  // namespace strata::testing
