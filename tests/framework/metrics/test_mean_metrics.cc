// Mean, Sum and MeanMetricWrapper by hand: accumulation over several updates, Keras' sample
// weight rules, reset_state, and results that are tensors computed from the state.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;

double value(const metrics::Metric& m) { return m.result().item<double>(); }

TEST(MeanMetric, AccumulatesOverUpdates) {
  metrics::Mean m;
  EXPECT_EQ(value(m), 0.0);  // divide_no_nan: an empty metric reads 0
  m.update_state(tensor({1.0f, 3.0f, 5.0f, 7.0f}));
  EXPECT_NEAR(value(m), 4.0, 1e-6);
  // A scalar counts as one sample: (16 + 10) / 5.
  m.update_state(Tensor::scalar(10.0f));
  EXPECT_NEAR(value(m), 5.2, 1e-6);
  m.reset_state();
  EXPECT_EQ(value(m), 0.0);
  m.update_state(tensor({2.0f}));
  EXPECT_NEAR(value(m), 2.0, 1e-6);
}

TEST(MeanMetric, SampleWeights) {
  metrics::Mean m;
  // Keras' docstring: weights [1, 1, 0, 0] -> (1 + 3) / 2.
  m.update_state(tensor({1.0f, 3.0f, 5.0f, 7.0f}), tensor({1.0f, 1.0f, 0.0f, 0.0f}));
  EXPECT_NEAR(value(m), 2.0, 1e-6);
  // [N, 2] values are averaged per sample ([1.5, 3.5]) and weighted [1, 3]:
  // total 4 (before) + 1.5 + 10.5 = 16, count 2 + 4 = 6.
  m.update_state(tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2}), tensor({1.0f, 3.0f}, {2, 1}));
  EXPECT_NEAR(value(m), 16.0 / 6.0, 1e-6);
  // Integer weights are cast to the metric's dtype; [N, 1] values with [N] weights.
  metrics::Mean n;
  n.update_state(tensor({2.0f, 4.0f}, {2, 1}), tensor<int32_t>({3, 1}));
  EXPECT_NEAR(value(n), (6.0 + 4.0) / 4.0, 1e-6);
}

TEST(MeanMetric, Float64AndResultIsATensorCopy) {
  metrics::Mean m("loss", float64);
  m.update_state(tensor({0.1, 0.2}));
  const Tensor r = m.result();
  EXPECT_EQ(r.dtype(), float64);
  EXPECT_EQ(r.rank(), 0);
  EXPECT_EQ(r.device(), m.variables()[0]->device());
  EXPECT_FALSE(r.shares_memory_with(m.variables()[0]->value()));
  m.update_state(tensor({1.0}));
  EXPECT_NEAR(r.item<double>(), 0.15, 1e-12);  // the earlier result does not move
  EXPECT_NEAR(value(m), 1.3 / 3.0, 1e-12);
}

TEST(SumMetric, AccumulatesWeightsAndResets) {
  metrics::Sum s;
  s.update_state(tensor({1.0f, 3.0f, 5.0f, 7.0f}));
  EXPECT_NEAR(value(s), 16.0, 1e-6);
  const Tensor before = s.result();
  s.update_state(tensor({1.0f, 3.0f, 5.0f, 7.0f}), tensor({1.0f, 1.0f, 0.0f, 0.0f}));
  EXPECT_NEAR(value(s), 20.0, 1e-6);
  EXPECT_NEAR(before.item<double>(), 16.0, 1e-6);  // result() is a copy
  // [N, 2] values are summed per sample: (1+2)*2 + (3+4)*1 = 13.
  s.update_state(tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2}), tensor({2.0f, 1.0f}));
  EXPECT_NEAR(value(s), 33.0, 1e-6);
  s.reset_state();
  EXPECT_EQ(value(s), 0.0);
}

TEST(MeanMetric, GenericUpdateForm) {
  metrics::Mean m("loss");
  metrics::Metric& base = m;
  base.update_state_from({tensor({2.0f, 4.0f})});
  EXPECT_NEAR(value(m), 3.0, 1e-6);
  expect_error<ValueError>([&] { base.update_state_from({ones({2}), ones({2})}); },
                           {"'loss'", "1 input"});
  expect_error<ValueError>([&] { base.update_state(ones({2}), ones({2})); },
                           {"'loss'", "values"});
  // The (y_true, y_pred, sample_weight) form is declared on Mean and Sum too (so that their
  // (values, sample_weight) form hides nothing): the same error, and two tensors still mean
  // (values, sample_weight).
  expect_error<ValueError>([&] { m.update_state(ones({2}), ones({2}), Tensor()); },
                           {"'loss'", "values"});
  metrics::Sum sum("total");
  expect_error<ValueError>([&] { sum.update_state(ones({2}), ones({2}), Tensor()); },
                           {"'total'", "values"});
  sum.update_state(tensor({1.0f, 3.0f}), tensor({2.0f, 0.5f}));
  EXPECT_NEAR(value(sum), 3.5, 1e-6);
}

TEST(MeanMetricWrapper, MeanOfLossFunction) {
  // Keras' MeanSquaredError docstring: per-sample [0.5, 0] -> 0.25; weights [1, 0] -> 0.5.
  metrics::MeanMetricWrapper m(losses::mean_squared_error, "mse");
  const Tensor y = tensor({0.0f, 1.0f, 0.0f, 0.0f}, {2, 2});
  const Tensor p = tensor({1.0f, 1.0f, 0.0f, 0.0f}, {2, 2});
  m.update_state(y, p);
  EXPECT_NEAR(value(m), 0.25, 1e-6);
  m.update_state(y, p, tensor({1.0f, 0.0f}));  // total 0.5 + 0.5, count 2 + 1
  EXPECT_NEAR(value(m), 1.0 / 3.0, 1e-6);
  m.update_state_from({y, p});
  EXPECT_NEAR(value(m), 1.5 / 5.0, 1e-6);
  m.reset_state();
  m.update_state(y, p, tensor({1.0f, 0.0f}));
  EXPECT_NEAR(value(m), 0.5, 1e-6);
}

TEST(MeanMetric, Errors) {
  metrics::Mean m("loss");
  expect_error<ShapeError>([&] { m.update_state(ones({4}), ones({3})); },
                           {"loss", "[3]", "[4]"});
  expect_error<ValueError>([&] { m.update_state(Tensor()); }, {"loss", "values"});
  expect_error<DTypeError>([] { metrics::Mean bad("m", int32); }, {"'m'", "floating"});
  metrics::MeanMetricWrapper mse(losses::mean_squared_error, "mse");
  expect_error<ShapeError>([&] { mse.update_state(ones({3, 1}), ones({2, 1})); },
                           {"mse", "[3,1]", "[2,1]"});
}

TEST(MeanMetric, UpdatesRecordNoGradients) {
  metrics::Mean m;
  const Tensor x = tensor({1.0f, 2.0f});
  GradientTape tape;
  tape.watch(x);
  m.update_state(x * 2.0);
  EXPECT_EQ(m.result().grad_node(), nullptr);
  EXPECT_NEAR(value(m), 3.0, 1e-6);
}

}  // namespace
}  // namespace strata
