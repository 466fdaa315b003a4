#include "distribute/collectives/rows_in_a_sum.h"

#include <cmath>
#include <cstring>
#include <string>

#include "framework/core/error.h"

namespace strata::distribute {
namespace {

// A float64's bits in three pieces, low first: 22, 21 and 21 bits (each < 2^22 < 2^24).
constexpr int kBits[kFloatsPerRowValue] = {22, 21, 21};

}  // namespace

Tensor rows_in_a_sum_slot(const std::vector<double>& row, int slot, int slots) {
  const int64_t width = int64_t(row.size());
  std::vector<float> out(size_t(int64_t(slots) * width * kFloatsPerRowValue), 0.0f);
  float* mine = out.data() + int64_t(slot) * width * kFloatsPerRowValue;
  for (int64_t i = 0; i < width; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, &row[size_t(i)], sizeof bits);
    for (int p = 0; p < kFloatsPerRowValue; ++p) {
      mine[i * kFloatsPerRowValue + p] = float(bits & ((uint64_t(1) << kBits[p]) - 1));
      bits >>= kBits[p];
    }
  }
  return Tensor::from_vector(out, Shape{int64_t(out.size())});
}

std::vector<double> rows_from_a_sum(const Tensor& summed, int slots, int64_t width) {
  const int64_t want = int64_t(slots) * width * kFloatsPerRowValue;
  if (summed.dtype() != DType::kFloat32 || summed.numel() != want) {
    throw ValueError("rows_from_a_sum: expected " + std::to_string(want) +
                     " float32 values (" + std::to_string(slots) + " slots of " +
                     std::to_string(width) + " rows), got " + std::to_string(summed.numel()) +
                     " of " + dtype_name(summed.dtype()));
  }
  const std::vector<float> in = summed.to_vector<float>();
  std::vector<double> rows(size_t(int64_t(slots) * width));
  for (size_t i = 0; i < rows.size(); ++i) {
    uint64_t bits = 0;
    int shift = 0;
    for (int p = 0; p < kFloatsPerRowValue; ++p) {
      const float piece = in[i * kFloatsPerRowValue + size_t(p)];
      const double limit = double(uint64_t(1) << kBits[p]);
      if (!(piece >= 0.0f) || double(piece) >= limit || std::floor(piece) != piece) {
        throw ValueError("rows_from_a_sum: value " + std::to_string(i) + " piece " +
                         std::to_string(p) + " is " + std::to_string(piece) +
                         ", not an integer below 2^" + std::to_string(kBits[p]) +
                         ": every slot but one must be zeros");
      }
      bits |= uint64_t(piece) << shift;
      shift += kBits[p];
    }
    std::memcpy(&rows[i], &bits, sizeof bits);
  }
  return rows;
}

}  // namespace strata::distribute
