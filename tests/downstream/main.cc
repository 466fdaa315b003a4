// The README's "Using Strata" example, built against the installed headers and library only.
// Exits 0 when the model learned (final loss well below the starting one).
#include <strata/strata.h>

#include <iostream>

int main() {
  using namespace strata;
  set_random_seed(42);
  Tensor x = random_normal({256, 8});
  Tensor y = reduce_sum(x, {1}, /*keepdims=*/true);

  Sequential model({std::make_shared<Dense>(16, "relu"), std::make_shared<Dense>(1)});
  optimizers::Adam optimizer(1e-2);
  losses::MeanSquaredError mse;
  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    GradientTape tape;
    Tensor loss = mse(y, model(x, /*training=*/true));
    auto vars = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
    (step == 0 ? first : last) = loss.item<double>();
  }
  std::cout << model(x).slice(0, 3) << "\n";
  std::cout << "loss " << first << " -> " << last << "\n";
  return last < 0.05 * first ? 0 : 1;
}
