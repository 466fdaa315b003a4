// The IDX format of MNIST and Fashion-MNIST: a big-endian header (two zero bytes, a type byte,
// a rank byte, then one uint32 per dimension) followed by the elements, row-major, big-endian.
// Files may be plain or gzip-compressed (detected by content, not by name).
#pragma once

#include <string>

#include "framework/core/tensor.h"

namespace strata::data {

// IDX element types (the third byte of the magic number).
enum class IdxType : unsigned char {
  kUInt8 = 0x08,   // read as uint8
  kInt8 = 0x09,    // read as int32 (Strata has no int8)
  kInt16 = 0x0B,   // read as int32
  kInt32 = 0x0C,   // read as int32
  kFloat32 = 0x0D, // read as float32
  kFloat64 = 0x0E, // read as float64
};

// Reads a whole IDX file. Throws IOError when the file is missing or unreadable, ValueError
// when its contents are not IDX (wrong magic, truncated header or data, trailing bytes, absurd
// dimensions); each message names the file and what was expected vs found.
Tensor read_idx(const std::string& path);

// Writes `t` as IDX, gzip-compressed when `gzip`. The element type follows the tensor's dtype
// (uint8 -> ubyte, int32 -> int, float32 -> float, float64 -> double) unless `type` is given;
// an int32 tensor written as kInt8/kInt16 must fit that range (ValueError otherwise).
void write_idx(const std::string& path, const Tensor& t, bool gzip = false);
void write_idx(const std::string& path, const Tensor& t, bool gzip, IdxType type);

}  // namespace strata::data
