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
