// Image files <-> uint8 HWC tensors (stb_image: PNG, JPEG, BMP, GIF first frame, ...), and the
// bilinear resize Keras' image_dataset_from_directory applies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "framework/core/tensor.h"

namespace strata::data {

// Images with more pixels than this are refused before they are decoded: a few hundred KB of
// PNG can declare 15000x15000 pixels and decode to gigabytes (a decompression bomb). The value
// is PIL's Image.MAX_IMAGE_PIXELS (a quarter GiB of 3-channel pixels).
inline constexpr int64_t kDefaultMaxImagePixels = 89'478'485;
// The limit decode_image applies when its caller gives none: kDefaultMaxImagePixels until
// set_max_image_pixels changes it for the whole process; 0 means no limit.
int64_t max_image_pixels();
void set_max_image_pixels(int64_t pixels);  // ValueError when negative

// Decodes an image file to uint8 [H,W,C]. channels: 1 (grayscale), 3 (RGB), 4 (RGBA), or 0 to
// keep what the file stores (1..4). max_pixels: the decompression-bomb limit (0: none; unset:
// max_image_pixels()). IOError when the file is missing, ValueError when it can't be decoded or
// is over the limit, ResourceExhaustedError when memory runs out; each names the file.
Tensor decode_image(const std::string& path, int channels = 0,
                    std::optional<int64_t> max_pixels = std::nullopt);
// The same for an encoded image held in memory; `name` stands for the file in messages.
Tensor decode_image_from_memory(std::string_view bytes, int channels = 0,
                                std::optional<int64_t> max_pixels = std::nullopt,
                                const std::string& name = "<memory>");

// Bilinear resize of [H,W,C] or [N,H,W,C] (any real dtype) to height x width, float32 output,
// matching tf.image.resize(method="bilinear", antialias=False): half-pixel centres, edges clamped.
Tensor resize_bilinear(const Tensor& image, int height, int width);

// Writes uint8 [H,W,C] (C = 1..4) or [H,W] as a PNG file. IOError when writing fails.
void write_png(const std::string& path, const Tensor& image);

}  // namespace strata::data
