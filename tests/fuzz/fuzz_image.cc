// Image decoding (stb_image: PNG, JPEG, BMP, GIF) and the resize image_dataset_from_directory
// applies after it: decode_image_from_memory on the input, then resize_bilinear to 8x8; and the
// same bytes through the tensor ops (image_coding.h: magic bytes, the GIF frame walk).
#include <stb/stb_image_write.h>

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/image_coding.h"
#include "datasets/image_io.h"
#include "framework/data/bytes_tensor.h"
#include "framework/core/error.h"
#include "fuzz/fuzz_support.h"
#include "support/test_images.h"

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
  write_seed(dir, "image.gif", strata::testing::gif_bytes(5, 3, 1));
  // Two frames: decode_png refuses an animated GIF after counting its frames.
  write_seed(dir, "animated.gif", strata::testing::gif_bytes(5, 3, 2));
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
  // The tensor ops read the process-wide limit (they take none, as TensorFlow's).
  static const bool limited = (strata::data::set_max_image_pixels(kMaxPixels), true);
  (void)limited;
  const strata::Tensor contents = strata::data::bytes_tensor(strata::fuzz::as_view(data, size));
  try {
    (void)strata::data::decode_png(contents, kChannels[(size / 4) % 4]).numel();
  } catch (const strata::Error&) {
  }
  try {
    (void)strata::data::decode_image(contents, kChannels[(size / 16) % 4]).numel();
  } catch (const strata::Error&) {
  }
  return 0;
}
