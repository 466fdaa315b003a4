// Encoded images in tensors <-> pixels, as ops of an input pipeline: TensorFlow's
// tf.io.decode_image / decode_png / decode_jpeg / encode_png, with their names and defaults.
//
//   data::FeatureSpecs spec = {{"image/encoded", data::FixedLenFeature({}, uint8)},
//                              {"image/class/label", data::FixedLenFeature({}, int64)}};
//   auto ds = data::TFRecordDataset(files).map([spec](const data::Element& e) {
//     auto f = data::parse_single_example(e[0], spec);
//     return data::Element{data::decode_png(f["image/encoded"].values, 3),
//                          f["image/class/label"].values};
//   });
//
// `contents` is the encoded file as Strata carries a string: a 1-D uint8 tensor of its bytes (a
// TFRecordDataset element, a bytes feature's values, data::bytes_tensor(s)). TensorFlow's is a
// 0-D string tensor; Strata has no string dtype, so a 0-D uint8 tensor (one byte) is refused like
// any other rank (ShapeError), and another dtype is a DTypeError.
//
// The format is told by the magic bytes, as TensorFlow does: PNG, JPEG, GIF (its first frame)
// and BMP, decoded by stb_image (as data::decode_image(path) in image_io.h). Like TensorFlow's
// kernel, which all four ops share, decode_png and decode_jpeg decode PNG, JPEG and single-frame
// GIF alike; a BMP, an animated GIF or an unknown format is a ValueError naming the op and the
// format found, pointing to decode_image (or, for an unknown one, listing the formats).
//
// channels: 0 keeps the image's own count (PNG 1-4, JPEG 1 or 3, GIF 3, BMP 3 or 4), 1 gives
// grayscale, 3 RGB, 4 RGBA (stb converts; opaque alpha is added). TensorFlow's per-format rules
// hold: JPEG takes 0, 1 or 3, GIF 0 or 3, BMP 0, 3 or 4; anything else is a ValueError.
// The result is uint8 [H,W,C]; decode_image on an animated GIF gives its first frame
// (TensorFlow's decode_image(..., expand_animations=False)). Images over max_image_pixels()
// (image_io.h) are refused from their header, before any pixel is decoded (decompression bombs).
// Truncated or corrupt bytes are a ValueError naming the op, the format and stb's reason;
// running out of memory is a ResourceExhaustedError.
#pragma once

#include "datasets/image_io.h"  // decode_image(path), max_image_pixels(): one overload set
#include "framework/core/tensor.h"

namespace strata::data {

// Any of PNG, JPEG, GIF, BMP. A Tensor argument picks this overload; a path (std::string, or a
// string literal) picks image_io.h's decode_image(path).
Tensor decode_image(const Tensor& contents, int channels = 0);
// PNG, JPEG or single-frame GIF (see above); BMP and animated GIF: use decode_image.
Tensor decode_png(const Tensor& contents, int channels = 0);
Tensor decode_jpeg(const Tensor& contents, int channels = 0);

// uint8 [H,W,C] (C = 1..4: gray, gray+alpha, RGB, RGBA) or [H,W] -> a 1-D uint8 tensor of PNG
// bytes, at the encoder's default compression (TensorFlow's compression=-1). Lossless:
// decode_png gives the pixels back. DTypeError for another dtype, ShapeError for another shape
// or an empty image. (TensorFlow's batches [N,H,W,C] -> N strings have no counterpart without a
// string dtype: encode each image.)
Tensor encode_png(const Tensor& image);

}  // namespace strata::data
