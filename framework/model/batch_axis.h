// The most common shape mistake: one sample passed where a model expects a batch ([12] where
// [-1, 12] is wanted). Errors add this hint so the message says what is wrong, not only which
// dimension differs.
#pragma once

#include <string>

#include "framework/core/shape.h"

namespace strata {

// When `got` is `expected` (batch axis first, -1 for any size) without its batch axis: ": the
// batch axis is missing: pass a batch of one sample, x.reshape({1, 12})". Otherwise "".
std::string missing_batch_axis_hint(const Shape& expected, const Shape& got);

}  // namespace strata
