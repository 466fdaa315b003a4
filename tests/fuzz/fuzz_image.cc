// Image decoding (stb_image: PNG, JPEG, BMP, GIF) and the resize image_dataset_from_directory
// applies after it: decode_image_from_memory on the input, then resize_bilinear to 8x8.
#include <stb/stb_image_write.h>

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/image_io.h"
#include "framework/core/error.h"
#include "fuzz/fuzz_support.h"

namespace strata::fuzz {
namespace {

// A small image whose pixels vary, so the encoders use more than one symbol.
std::vector<unsigned char> pixels(int w, int h, int c) {
  std::vector<unsigned char> p(size_t(w * h * c));
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<unsigned char>(i * 37 % 251);
  return p;
}

void append(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
}

// An uncompressed GIF (stb writes none): w x h pixels of a 4-colour palette, LZW-coded with a
// clear code before every pixel so every code stays 3 bits wide.
std::string gif(int w, int h) {
  std::string g = "GIF89a";
  auto u16 = [&g](int v) { g += char(v & 255); g += char(v >> 8); };
  u16(w);
  u16(h);
  g += char(0x81);  // global colour table of 2^(1+1) = 4 entries
  g += '\0';
  g += '\0';
  for (int i = 0; i < 4; ++i) g += std::string{char(i * 80), char(255 - i * 80), char(i * 40)};
  g += ',';  // image descriptor
  u16(0);
  u16(0);
  u16(w);
  u16(h);
  g += '\0';
  g += char(2);  // LZW minimum code size: clear = 4, end = 5, 3-bit codes
  std::vector<int> codes;
  for (int i = 0; i < w * h; ++i) {
    codes.push_back(4);
    codes.push_back(i % 4);
  }
  codes.push_back(5);
  std::string packed;
  uint32_t bits = 0;
  int count = 0;
  for (int code : codes) {
    bits |= uint32_t(code) << count;
    count += 3;
    while (count >= 8) {
      packed += char(bits & 255);
      bits >>= 8;
      count -= 8;
    }
  }
  if (count > 0) packed += char(bits & 255);
  for (size_t i = 0; i < packed.size(); i += 255) {
    const std::string block = packed.substr(i, 255);
    g += char(block.size());
    g += block;
  }
  g += '\0';  // end of the image data
  g += ';';   // trailer
  return g;
}

}  // namespace

void write_seeds(const std::string& dir) {
  for (int c : {1, 2, 3, 4}) {
    const std::vector<unsigned char> p = pixels(7, 5, c);
    std::string png, bmp, jpg;
    stbi_write_png_to_func(append, &png, 7, 5, c, p.data(), 7 * c);
    stbi_write_bmp_to_func(append, &bmp, 7, 5, c, p.data());
    stbi_write_jpg_to_func(append, &jpg, 7, 5, c, p.data(), 90);
    const std::string n = std::to_string(c);
    write_seed(dir, "image_" + n + ".png", png);
    write_seed(dir, "image_" + n + ".bmp", bmp);
    write_seed(dir, "image_" + n + ".jpg", jpg);
  }
  write_seed(dir, "image.gif", gif(5, 3));
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The channel count comes from the input's length, so each one is exercised (stb converts
  // between channel counts itself) and a given input always decodes the same way.
  static const int kChannels[] = {0, 1, 3, 4};
  // A lower pixel limit than the default keeps each run fast; the limit's code is the same.
  constexpr int64_t kMaxPixels = int64_t(1) << 18;
  try {
    const strata::Tensor image = strata::data::decode_image_from_memory(
        strata::fuzz::as_view(data, size), kChannels[size % 4], kMaxPixels, "fuzz input");
    const strata::Tensor resized = strata::data::resize_bilinear(image, 8, 8);
    (void)resized.numel();
  } catch (const strata::Error&) {
  }
  return 0;
}
