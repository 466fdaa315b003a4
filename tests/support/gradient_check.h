// Finite-difference gradient checks shared by the op and layer tests.
#pragma once

#include <functional>
#include <vector>

#include <strata/strata.h>

namespace strata::testing {

struct GradCheckOptions {
  double epsilon = 1e-3;  // finite-difference step (use ~1e-2 for float32)
  double rtol = 1e-2;
  double atol = 1e-3;
};

// Checks autograd's gradient of sum(f(inputs) * w) (w a fixed random weighting, so every output
// element matters differently) against central differences, for every element of every input
// that is floating. Reports the op name, input index and element on failure.
void expect_gradients_match(const char* name,
                            const std::function<Tensor(const std::vector<Tensor>&)>& f,
                            const std::vector<Tensor>& inputs, GradCheckOptions options = {});

// Returns whether `a` and `b` have equal shapes and elements within atol + rtol*|b|; prints the
// first mismatch through GoogleTest.
void expect_all_close(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-6);

}  // namespace strata::testing
