// Image files <-> uint8 HWC tensors (stb_image: PNG, JPEG, BMP, GIF first frame, ...), and the
// bilinear resize Keras' image_dataset_from_directory applies.
#pragma once

#include <string>

#include "framework/core/tensor.h"

namespace strata::data {

// Decodes an image file to uint8 [H,W,C]. channels: 1 (grayscale), 3 (RGB), 4 (RGBA), or 0 to
// keep what the file stores (1..4). IOError when the file is missing, ValueError when it can't be
// decoded; both name the file.
Tensor decode_image(const std::string& path, int channels = 0);

// Bilinear resize of [H,W,C] or [N,H,W,C] (any real dtype) to height x width, float32 output,
// matching tf.image.resize(method="bilinear", antialias=False): half-pixel centres, edges clamped.
Tensor resize_bilinear(const Tensor& image, int height, int width);

// Writes uint8 [H,W,C] (C = 1..4) or [H,W] as a PNG file. IOError when writing fails.
void write_png(const std::string& path, const Tensor& image);

}  // namespace strata::data
