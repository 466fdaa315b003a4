// Small datasets and readers shared by the Dataset pipeline tests.
#pragma once

#include <cstdint>
#include <vector>

#include "framework/data/dataset.h"

namespace strata::data::testing {

// Elements 0, 1, ..., n-1 as int64 scalars.
inline Dataset range_ds(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = i;
  return Dataset::from_tensor_slices({Tensor::from_vector(v)});
}

// The scalar value of component 0 of each element of one pass.
inline std::vector<int64_t> scalars(const Dataset& ds) {
  std::vector<int64_t> out;
  auto it = ds.make_iterator();
  while (auto e = it->next()) out.push_back((*e)[0].item<int64_t>());
  return out;
}

}  // namespace strata::data::testing
