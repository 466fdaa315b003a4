// Trains y = 2x + 1 through the installed headers and library; exits 0 when it learned.
#include <strata/strata.h>

#include <cmath>
#include <iostream>

int main() {
  using namespace strata;
  set_random_seed(7);
  Tensor x = random_uniform({64, 1}, -1.0, 1.0);
  Tensor y = x * 2.0 + 1.0;
  auto w = create_variable({.name = "w", .shape = {1, 1}});
  auto b = create_variable({.name = "b", .shape = {1}});
  for (int step = 0; step < 300; ++step) {
    GradientTape tape;
    Tensor err = matmul(x, w->value()) + b->value() - y;
    Tensor loss = reduce_mean(err * err);
    std::vector<Tensor> g = tape.gradient(loss, std::vector<VariablePtr>{w, b});
    w->assign_sub(g[0] * 0.1);
    b->assign_sub(g[1] * 0.1);
  }
  const float wv = w->value().item<float>(), bv = b->value().item<float>();
  std::cout << "w=" << wv << " b=" << bv << "\n";
  return std::fabs(wv - 2.0f) < 1e-2f && std::fabs(bv - 1.0f) < 1e-2f ? 0 : 1;
}
