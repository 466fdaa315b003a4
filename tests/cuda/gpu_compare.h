// Element comparisons for the GPU-vs-CPU tests of kernels whose results are defined exactly
// (casts, integer math, comparisons, Philox random numbers) or that may hold infinities:
// expect_all_close would call inf vs inf a mismatch (inf - inf is NaN).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <strata/strata.h>

namespace strata::testing {

// Checks `actual` (any device) against `expected`: same shape and dtype, and every element
// within atol + rtol * |expected|, where equal infinities and NaN against NaN count as equal.
// rtol = atol = 0 asks for identical values. Reports the first few mismatches.
inline void expect_values(const Tensor& actual, const Tensor& expected, double rtol = 0.0,
                          double atol = 0.0, const std::string& what = "") {
  SCOPED_TRACE(what);
  ASSERT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.dtype(), expected.dtype());
  int failures = 0;
  if (expected.dtype() == DType::kInt64) {  // beyond 2^53 a double would round
    const std::vector<int64_t> a = actual.to_vector<int64_t>(), e = expected.to_vector<int64_t>();
    for (size_t i = 0; i < a.size() && failures < 5; ++i) {
      if (a[i] != e[i]) {
        ++failures;
        ADD_FAILURE() << "element " << i << ": " << a[i] << " vs expected " << e[i];
      }
    }
    return;
  }
  const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  for (size_t i = 0; i < a.size() && failures < 5; ++i) {
    const bool same = a[i] == e[i] || (std::isnan(a[i]) && std::isnan(e[i]));
    if (!same && !(std::fabs(a[i] - e[i]) <= atol + rtol * std::fabs(e[i]))) {
      ++failures;
      ADD_FAILURE() << "element " << i << ": " << a[i] << " vs expected " << e[i];
    }
  }
}

}  // namespace strata::testing
