#include "datasets/image_io.h"

#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "framework/core/error.h"

namespace strata::data {

Tensor decode_image(const std::string& path, int channels) {
  if (channels != 0 && channels != 1 && channels != 3 && channels != 4) {
    throw ValueError("decode_image: " + path + ": channels must be 0, 1, 3 or 4, got " +
                     std::to_string(channels));
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw IOError("decode_image: " + path + ": no such file");
  }
  int w = 0, h = 0, stored = 0;
  // stbi_load converts between channel counts itself (gray -> RGB replicates, RGB -> gray uses
  // the ITU-R BT.601-style luma stb implements), as tf.io.decode_image(channels=...) does.
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load(path.c_str(), &w, &h, &stored, channels), stbi_image_free);
  if (!pixels) {
    throw ValueError("decode_image: " + path + ": cannot decode as an image (" +
                     stbi_failure_reason() + "); expected PNG, JPEG, BMP or GIF");
  }
  const int c = channels ? channels : stored;
  Tensor out = Tensor::empty({h, w, c}, uint8);
  std::memcpy(out.data<uint8_t>(), pixels.get(), size_t(h) * size_t(w) * size_t(c));
  return out;
}

Tensor resize_bilinear(const Tensor& image, int height, int width) {
  if (image.rank() != 3 && image.rank() != 4) {
    throw ShapeError("resize_bilinear: expected an image [H,W,C] or batch [N,H,W,C], got " +
                     image.shape().to_string());
  }
  if (height <= 0 || width <= 0) {
    throw ValueError("resize_bilinear: size must be positive, got " + std::to_string(height) +
                     "x" + std::to_string(width));
  }
  if (image.dtype() == bool_) {
    throw DTypeError("resize_bilinear: expected a real dtype, got bool");
  }
  const bool batched = image.rank() == 4;
  const int64_t n = batched ? image.dim(0) : 1;
  const int64_t in_h = image.dim(-3), in_w = image.dim(-2), ch = image.dim(-1);
  if (in_h == 0 || in_w == 0) {
    throw ShapeError("resize_bilinear: cannot resize an empty image " + image.shape().to_string());
  }
  const Tensor src_t = image.dtype() == float32 ? image : image.cast(float32);
  const float* src = src_t.data<float>();
  Tensor out = Tensor::empty(batched ? Shape{n, height, width, ch} : Shape{height, width, ch});
  float* dst = out.data<float>();

  // TensorFlow's half-pixel-centre sampling: source = (dst + 0.5) * scale - 0.5.
  struct Tap { int64_t lo, hi; float frac; };
  auto taps = [](int64_t out_size, int64_t in_size) {
    std::vector<Tap> t(static_cast<size_t>(out_size));
    const float scale = float(in_size) / float(out_size);
    for (int64_t i = 0; i < out_size; ++i) {
      const float in = (float(i) + 0.5f) * scale - 0.5f;
      const float f = std::floor(in);
      t[size_t(i)] = {std::max<int64_t>(int64_t(f), 0),
                      std::min<int64_t>(int64_t(std::ceil(in)), in_size - 1), in - f};
    }
    return t;
  };
  const std::vector<Tap> ys = taps(height, in_h), xs = taps(width, in_w);
  for (int64_t b = 0; b < n; ++b) {
    const float* img = src + b * in_h * in_w * ch;
    float* o = dst + b * int64_t(height) * width * ch;
    for (const Tap& y : ys) {
      const float* top = img + y.lo * in_w * ch;
      const float* bottom = img + y.hi * in_w * ch;
      for (const Tap& x : xs) {
        for (int64_t c = 0; c < ch; ++c) {
          const float tl = top[x.lo * ch + c], tr = top[x.hi * ch + c];
          const float bl = bottom[x.lo * ch + c], br = bottom[x.hi * ch + c];
          const float t = tl + (tr - tl) * x.frac;
          const float btm = bl + (br - bl) * x.frac;
          *o++ = t + (btm - t) * y.frac;
        }
      }
    }
  }
  return out;
}

void write_png(const std::string& path, const Tensor& image) {
  if (image.dtype() != uint8) {
    throw DTypeError("write_png: " + path + ": expected uint8 pixels, got " +
                     dtype_name(image.dtype()));
  }
  const int c = image.rank() == 2 ? 1 : image.rank() == 3 ? int(image.dim(2)) : 0;
  if (c < 1 || c > 4) {
    throw ShapeError("write_png: " + path + ": expected [H,W] or [H,W,C] with C in 1..4, got " +
                     image.shape().to_string());
  }
  const int h = int(image.dim(0)), w = int(image.dim(1));
  if (!stbi_write_png(path.c_str(), w, h, c, image.data<uint8_t>(), w * c)) {
    throw IOError("write_png: " + path + ": cannot write");
  }
}

}  // namespace strata::data
