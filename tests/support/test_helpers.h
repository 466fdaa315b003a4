// Small helpers shared by the tests: element values, float64 tensors, and checks on the error an
// op throws.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <strata/strata.h>

namespace strata::testing {

// Sets config::enable_tensor_float_32_execution for its lifetime, then restores the old value.
// Tf32Scope exact(false): exact float32 matmuls and convolutions on a GPU, for tests that compare
// runs at rtol 1e-5 (TF32, on by default, put differently split runs about 1e-4 apart on an H200).
class Tf32Scope {
 public:
  explicit Tf32Scope(bool enabled) : previous_(config::tensor_float_32_execution_enabled()) {
    config::enable_tensor_float_32_execution(enabled);
  }
  ~Tf32Scope() { config::enable_tensor_float_32_execution(previous_); }
  Tf32Scope(const Tf32Scope&) = delete;
  Tf32Scope& operator=(const Tf32Scope&) = delete;

 private:
  bool previous_;
};

// The elements of t as doubles, in row-major order.
inline std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// A float64 tensor of shape s holding v.
inline Tensor f64(std::vector<double> v, Shape s) { return Tensor::from_vector(v, s); }

// Runs `f` and checks it throws E whose message contains every one of `parts`. No exception, or
// one of another type, is a test failure.
template <typename E, typename F>
void expect_error(F&& f, std::initializer_list<std::string_view> parts) {
  try {
    f();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    const std::string what = e.what();
    for (std::string_view p : parts) {
      EXPECT_NE(what.find(p), std::string::npos) << what << " lacks " << p;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace strata::testing
