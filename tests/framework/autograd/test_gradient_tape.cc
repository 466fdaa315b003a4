#include <gtest/gtest.h>

#include <strata/strata.h>

#include "framework/autograd/node.h"

namespace strata {
namespace {

TEST(GradientTape, WatchedTensorGradient) {
  Tensor x = tensor({1.0f, 2.0f, 3.0f});
  GradientTape tape;
  tape.watch(x);
  Tensor y = reduce_sum(x * x * 3.0);  // dy/dx = 6x
  Tensor g = tape.gradient(y, x);
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{6, 12, 18}));
}

TEST(GradientTape, UnwatchedTensorsAreNotRecorded) {
  Tensor x = tensor({1.0f, 2.0f});
  GradientTape tape(/*persistent=*/true);
  Tensor y = reduce_sum(x * 2.0);
  EXPECT_EQ(y.grad_node(), nullptr);
  EXPECT_FALSE(tape.gradient(y, x).defined());
  std::vector<Tensor> z = tape.gradient(y, {x}, Tensor(), UnconnectedGradients::kZero);
  EXPECT_EQ(z[0].to_vector<float>(), (std::vector<float>{0, 0}));
}

TEST(GradientTape, NonPersistentTapeOnlyOnce) {
  Tensor x = tensor({2.0f});
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  tape.gradient(y, x);
  try {
    tape.gradient(y, x);
    FAIL() << "expected StateError";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("persistent"), std::string::npos);
  }
}

TEST(GradientTape, PersistentTapeAllowsMany) {
  Tensor x = tensor({2.0f});
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor y = x * x;
  Tensor z = y * x;  // x^3
  EXPECT_FLOAT_EQ(tape.gradient(y, x).item<float>(), 4.0f);
  EXPECT_FLOAT_EQ(tape.gradient(z, x).item<float>(), 12.0f);
  EXPECT_FLOAT_EQ(tape.gradient(z, y).item<float>(), 2.0f);  // w.r.t. an intermediate
}

TEST(GradientTape, SavedTensorsReleasedByBackward) {
  Tensor x = tensor({2.0f, 3.0f});
  GradientTape tape;
  tape.watch(x);
  Tensor y = reduce_sum(exp(x));
  ASSERT_NE(y.grad_node(), nullptr);
  EXPECT_FALSE(y.grad_node()->released());
  tape.gradient(y, x);
  EXPECT_TRUE(y.grad_node()->released());
}

TEST(GradientTape, GradientsAccumulateOverPaths) {
  Tensor x = tensor({3.0f});
  GradientTape tape;
  tape.watch(x);
  Tensor a = x * 2.0, b = x * x;
  Tensor y = a + b + x;  // 2x + x^2 + x -> 3 + 2x
  EXPECT_FLOAT_EQ(tape.gradient(y, x).item<float>(), 9.0f);
}

TEST(GradientTape, NonScalarTargetAndOutputGradient) {
  Tensor x = tensor({1.0f, 2.0f});
  GradientTape tape(true);
  tape.watch(x);
  Tensor y = x * x;
  EXPECT_EQ(tape.gradient(y, x).to_vector<float>(), (std::vector<float>{2, 4}));
  Tensor g = tape.gradient(y, {x}, tensor({10.0f, 1.0f}))[0];
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{20, 4}));
  EXPECT_THROW(tape.gradient(y, {x}, tensor({1.0f})), ShapeError);
}

TEST(GradientTape, NoGradGuardStopsRecording) {
  Tensor x = tensor({1.0f});
  GradientTape tape;
  tape.watch(x);
  Tensor y;
  {
    NoGradGuard guard;
    y = x * 2.0;
  }
  EXPECT_EQ(y.grad_node(), nullptr);
  Tensor z = stop_gradient(x) * 2.0;
  EXPECT_EQ(z.grad_node(), nullptr);
}

TEST(GradientTape, WatchRejectsIntegers) {
  GradientTape tape;
  EXPECT_THROW(tape.watch(tensor<int64_t>({1, 2})), DTypeError);
}

TEST(GradientTape, TrainableVariablesWatchedAutomatically) {
  auto w = create_variable({.name = "w", .shape = {2}, .initial_value = tensor({1.0f, 2.0f})});
  auto frozen = create_variable(
      {.name = "frozen", .shape = {2}, .initial_value = tensor({3.0f, 4.0f}), .trainable = false});
  {
    GradientTape tape;
    Tensor y = reduce_sum(w->value() * frozen->value());
    std::vector<Tensor> g = tape.gradient(y, std::vector<VariablePtr>{w, frozen});
    EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{3, 4}));
    EXPECT_FALSE(g[1].defined());  // not trainable, not watched
  }
  GradientTape tape2(false, /*watch_accessed_variables=*/false);
  tape2.watch(*frozen);
  Tensor y2 = reduce_sum(w->value() * frozen->value());
  std::vector<Tensor> g2 = tape2.gradient(y2, std::vector<VariablePtr>{w, frozen});
  EXPECT_FALSE(g2[0].defined());
  EXPECT_EQ(g2[1].to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(GradientTape, DeepChainDoesNotOverflowTheStack) {
  Tensor x = tensor({1.0f});
  GradientTape tape;
  tape.watch(x);
  Tensor y = x;
  for (int i = 0; i < 20000; ++i) y = y + 0.0;
  EXPECT_FLOAT_EQ(tape.gradient(y, x).item<float>(), 1.0f);
}

}  // namespace
}  // namespace strata
