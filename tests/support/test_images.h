// Test images: a uint8 pattern, and GIF files built by hand (stb writes none), for the image
// readers' and decoders' tests and the image fuzzer's seeds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace strata::testing {

// An h x w x c uint8 image whose values vary (i * 37 mod 256), so that encoders and decoders
// see more than one value.
inline Tensor pattern_image(int64_t h, int64_t w, int64_t c) {
  std::vector<uint8_t> v(size_t(h * w * c));
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(i * 37 % 256);
  return Tensor::from_vector(v, {h, w, c});
}

// A GIF of `frames` w x h frames over a 4-colour palette (red, green, blue, white), uncompressed:
// LZW with a clear code before every pixel keeps each code 3 bits wide. Pixel i of frame f has
// colour (i + f) % 4.
inline std::string gif_bytes(int w, int h, int frames) {
  std::string g = "GIF89a";
  auto u16 = [&g](int v) { g += char(v & 255); g += char(v >> 8); };
  u16(w);
  u16(h);
  g += char(0x81);  // a global colour table of 4 entries
  g += '\0';
  g += '\0';
  g += std::string("\xff\x00\x00\x00\xff\x00\x00\x00\xff\xff\xff\xff", 12);
  for (int f = 0; f < frames; ++f) {
    g += std::string("\x21\xf9\x04\x00\x0a\x00\x00\x00", 8);  // graphic control: 0.1 s delay
    g += ',';
    u16(0);
    u16(0);
    u16(w);
    u16(h);
    g += '\0';
    g += char(2);  // LZW minimum code size: clear = 4, end = 5, 3-bit codes
    std::vector<int> codes;
    for (int i = 0; i < w * h; ++i) {
      codes.push_back(4);
      codes.push_back((i + f) % 4);
    }
    codes.push_back(5);
    std::string packed;
    uint32_t bits = 0;
    int count = 0;
    for (int code : codes) {
      bits |= uint32_t(code) << count;
      count += 3;
      for (; count >= 8; count -= 8, bits >>= 8) packed += char(bits & 255);
    }
    if (count > 0) packed += char(bits & 255);
    for (size_t i = 0; i < packed.size(); i += 255) {
      const std::string block = packed.substr(i, 255);
      g += char(block.size());
      g += block;
    }
    g += '\0';
  }
  g += ';';
  return g;
}

}  // namespace strata::testing
