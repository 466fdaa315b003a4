// GradientTape's ready callback: each source reported once, as soon as its gradient is final,
// with the same value gradient() returns; what the bucketed all-reduce relies on.
#include <gtest/gtest.h>

#include <vector>

#include <strata/strata.h>

namespace strata {
namespace {

TEST(GradientReadyCallback, ReportsEverySourceOnceWithItsFinalGradient) {
  // Three "layers": w1 feeds w2 feeds w3; w1 also feeds the loss directly (two consumers).
  auto w1 = std::make_shared<Variable>(VariableSpec{.name = "w1", .shape = Shape{2}, .initial_value = tensor({1.0f, 2.0f})});
  auto w2 = std::make_shared<Variable>(VariableSpec{.name = "w2", .shape = Shape{2}, .initial_value = tensor({3.0f, 4.0f})});
  auto w3 = std::make_shared<Variable>(VariableSpec{.name = "w3", .shape = Shape{2}, .initial_value = tensor({5.0f, 6.0f})});
  auto unused = std::make_shared<Variable>(VariableSpec{.name = "u", .shape = Shape{2}});
  GradientTape tape;
  Tensor h1 = w1->value() * 2.0;
  Tensor h2 = h1 * w2->value();
  Tensor loss = reduce_sum(h2 * w3->value()) + reduce_sum(w1->value() * w1->value());
  std::vector<size_t> order;
  std::vector<Tensor> reported(4);
  tape.set_gradient_ready_callback([&](size_t i, const Tensor& g) {
    order.push_back(i);
    reported[i] = g.defined() ? g.clone() : g;
  });
  const std::vector<Tensor> grads = tape.gradient(loss, {w1, w2, w3, unused});
  ASSERT_EQ(order.size(), 4u);
  // w3 is consumed last in the forward pass, so its gradient is final first; w1 last among the
  // connected ones; the unconnected source at the end.
  EXPECT_EQ(order.front(), 2u);
  EXPECT_EQ(order.back(), 3u);
  EXPECT_LT(std::find(order.begin(), order.end(), 1u) - order.begin(),
            std::find(order.begin(), order.end(), 0u) - order.begin());
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(reported[i].defined()) << i;
    EXPECT_EQ(reported[i].to_vector<float>(), grads[i].to_vector<float>()) << i;
  }
  EXPECT_FALSE(reported[3].defined());
  // d/dw1 = 2 * w2 * w3 + 2 * w1
  EXPECT_EQ(grads[0].to_vector<float>(), (std::vector<float>{2 * 3 * 5 + 2 * 1, 2 * 4 * 6 + 2 * 2}));
}

TEST(GradientReadyCallback, SameSourceTwiceAndZeroUnconnected) {
  auto w = std::make_shared<Variable>(VariableSpec{.name = "w", .shape = Shape{1}, .initial_value = tensor({3.0f})});
  auto u = std::make_shared<Variable>(VariableSpec{.name = "u", .shape = Shape{1}});
  GradientTape tape;
  Tensor loss = reduce_sum(w->value() * w->value());
  int calls = 0;
  tape.set_gradient_ready_callback([&](size_t, const Tensor& g) {
    ++calls;
    EXPECT_TRUE(g.defined());
  });
  const std::vector<Tensor> grads = tape.gradient(loss, std::vector<VariablePtr>{w, w, u}, Tensor(),
                                                  UnconnectedGradients::kZero);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(grads[0].to_vector<float>(), std::vector<float>{6.0f});
  EXPECT_EQ(grads[1].to_vector<float>(), std::vector<float>{6.0f});
  EXPECT_EQ(grads[2].to_vector<float>(), std::vector<float>{0.0f});
}

}  // namespace
}  // namespace strata
