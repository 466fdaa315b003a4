// CRC32C (Castagnoli), the checksum of TFRecord files, and TensorFlow's "masked" form of it.
//   crc32c::value("123456789") == 0xE3069283
//   crc32c::mask(c) == ((c >> 15) | (c << 17)) + 0xa282ead8   (uint32 arithmetic)
// Records store masked CRCs because a CRC computed over data that itself holds CRCs is weak
// (LevelDB's reasoning, which TFRecord inherits).
#pragma once

#include <cstdint>
#include <string_view>

namespace strata::crc32c {

// The CRC32C of `data`.
uint32_t value(std::string_view data);

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
constexpr uint32_t mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
constexpr uint32_t unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace strata::crc32c
