// An all-gather of float64 rows carried, exactly, by a float32 sum all-reduce: each worker
// writes its row into its own slot of a zero buffer, and the sum over the workers is every
// worker's row (adding zeros is exact). A float64 does not fit a float32, so each is written as
// three integers below 2^22 (its 64 bits in pieces of 22, 21 and 21), which float32 holds
// exactly: whatever the value (NaN, infinities, subnormals), it comes back bit for bit.
//
// MultiWorkerMirroredStrategy sends its end-of-step state this way inside the step's last
// gradient all-reduce, so a step makes one collective, not two (framework/strategy/strategy.h,
// Strategy::fold_step_state).
#pragma once

#include <cstdint>
#include <vector>

#include "framework/core/tensor.h"

namespace strata::distribute {

// float32 values a row of `width` float64 takes.
inline constexpr int64_t kFloatsPerRowValue = 3;

// A float32 tensor of slots x width x kFloatsPerRowValue: zeros, but `row` in slot `slot`.
Tensor rows_in_a_sum_slot(const std::vector<double>& row, int slot, int slots);

// The rows back from the summed tensor (slots x width float64, slot-major). ValueError when the
// tensor is not float32 of that size or a value is not one of the integers a slot holds (the
// sum added something other than zeros).
std::vector<double> rows_from_a_sum(const Tensor& summed, int slots, int64_t width);

}  // namespace strata::distribute
