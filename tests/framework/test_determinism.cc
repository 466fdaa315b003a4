// The same seed gives bit-identical trained weights on 1 and on 2 threads.
#include <gtest/gtest.h>

#include <strata/strata.h>

namespace strata {
namespace {

std::vector<std::vector<float>> train_tiny_model(int threads) {
  set_num_threads(threads);
  set_random_seed(123);
  // Large enough that the parallel loops and oneDNN really split work across threads.
  Tensor x = random_normal({256, 32});
  Tensor y = cast(greater(reduce_sum(x, {1}), Tensor::scalar(0.0f)), int64);
  Sequential model({std::make_shared<Dense>(64, "relu"), std::make_shared<Dense>(64, "tanh"),
                    std::make_shared<Dense>(2)});
  optimizers::Adam opt(0.01);
  losses::SparseCategoricalCrossentropy loss_fn(/*from_logits=*/true);
  for (int step = 0; step < 20; ++step) {
    GradientTape tape;
    Tensor loss = loss_fn(y, dropout(model(x, true), 0.1f));
    auto vars = model.trainable_variables();
    opt.apply_gradients(tape.gradient(loss, vars), vars);
  }
  std::vector<std::vector<float>> weights;
  for (const VariablePtr& v : model.weights()) weights.push_back(v->value().to_vector<float>());
  return weights;
}

TEST(Determinism, SameSeedSameWeightsOnOneAndTwoThreads) {
  const auto one = train_tiny_model(1);
  const auto two = train_tiny_model(2);
  const auto again = train_tiny_model(2);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i], two[i]) << "weight " << i << " differs between 1 and 2 threads";
    EXPECT_EQ(two[i], again[i]) << "weight " << i << " differs between two runs";
  }
  set_num_threads(2);
}

}  // namespace
}  // namespace strata
