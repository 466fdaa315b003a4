// numpy-style text for tensor values: "[[1.  2.5]\n [3.  4. ]]", summarised with "..." (three
// items at each edge) when the tensor has more than 1000 elements, like numpy's defaults.
#pragma once

#include <string>

namespace strata {

class Tensor;
std::string format_tensor(const Tensor& t);

}  // namespace strata
