#include "framework/model/batch_axis.h"

namespace strata {

std::string missing_batch_axis_hint(const Shape& expected, const Shape& got) {
  if (expected.rank() < 1 || got.rank() != expected.rank() - 1) return "";
  for (int d = 0; d < got.rank(); ++d) {
    if (expected[d + 1] >= 0 && expected[d + 1] != got[d]) return "";
  }
  std::string dims = "1";
  for (int d = 0; d < got.rank(); ++d) dims += ", " + std::to_string(got[d]);
  return ": the batch axis is missing (the first axis counts samples); pass a batch of one "
         "sample as x.reshape({" + dims + "})";
}

}  // namespace strata
