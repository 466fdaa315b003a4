// End to end: linear regression with GradientTape + Adam reaches a small loss.
#include <gtest/gtest.h>

#include <strata/strata.h>

namespace strata {
namespace {

TEST(OptimizerTraining, LinearRegressionWithAdam) {
  // y = x @ [1, -2, 0.5] + 0.3, exactly; from zero weights Adam(0.05) gets the MSE under 1e-3.
  const Tensor x = random_normal({64, 3}, 0.0, 1.0, float32, /*seed=*/7);
  const Tensor w_true = tensor({1.0f, -2.0f, 0.5f}, {3, 1});
  const Tensor y = matmul(x, w_true) + 0.3;

  VariableSpec ws;
  ws.name = "linear/kernel";
  ws.shape = Shape{3, 1};
  VariableSpec bs;
  bs.name = "linear/bias";
  bs.shape = Shape{1};
  const VariablePtr w = create_variable(ws), b = create_variable(bs);
  const std::vector<VariablePtr> vars = {w, b};

  optimizers::Adam adam(0.05);
  losses::MeanSquaredError mse;
  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    GradientTape tape;
    const Tensor loss = mse(y, matmul(x, w->value()) + b->value());
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
    adam.apply_gradients(tape.gradient(loss, vars), vars);
  }
  EXPECT_GT(first, 1.0);
  EXPECT_LT(last, 1e-3);
  EXPECT_EQ(adam.iteration_count(), 200);
  const auto wv = w->value().to_vector<float>();
  EXPECT_NEAR(wv[0], 1.0, 0.05);
  EXPECT_NEAR(wv[1], -2.0, 0.05);
  EXPECT_NEAR(b->value().item<double>(), 0.3, 0.05);
}

}  // namespace
}  // namespace strata
