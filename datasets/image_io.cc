#include "datasets/image_io.h"

#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "datasets/reading.h"
#include "datasets/stb_image_impl.h"
#include "framework/core/error.h"
#include "framework/memory/format_bytes.h"

namespace strata::data {

namespace {

std::atomic<int64_t> g_max_image_pixels{kDefaultMaxImagePixels};

void check_channels(int channels, const std::string& where) {
  if (channels != 0 && channels != 1 && channels != 3 && channels != 4) {
    throw ValueError(where + ": channels must be 0, 1, 3 or 4, got " + std::to_string(channels));
  }
}

// stb's reason for the last failure on this thread, or a generic one where stb left none.
std::string failure_reason() {
  const char* reason = stbi_failure_reason();
  return reason != nullptr && *reason != '\0' ? reason : "truncated or corrupt";
}

Tensor decode(std::string_view bytes, int channels, std::optional<int64_t> max_pixels,
              const std::string& where) {
  check_channels(channels, where);
  if (max_pixels && *max_pixels < 0) {
    throw ValueError(where + ": max_pixels must be >= 0 (0: no limit), got " +
                     std::to_string(*max_pixels));
  }
  if (bytes.size() > size_t(std::numeric_limits<int>::max())) {
    throw ValueError(where + ": " + std::to_string(bytes.size()) + " bytes is more than the "
                     "image decoder reads (2 GiB); expected a PNG, JPEG, BMP or GIF file");
  }
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = int(bytes.size());
  // The header first: its dimensions are checked before any pixel is decoded.
  detail::clear_stbi_failure_reason();
  int w = 0, h = 0, stored = 0;
  if (!stbi_info_from_memory(data, len, &w, &h, &stored)) {
    throw ValueError(where + ": cannot decode as an image (" + failure_reason() +
                     "); expected PNG, JPEG, BMP or GIF");
  }
  // stb's BMP header reader reports a top-down image's height as negative (it takes the
  // absolute value only when decoding): the limit must see the size that will be decoded.
  const int64_t pixels = std::llabs(int64_t(w)) * std::llabs(int64_t(h));
  const int64_t limit = max_pixels ? *max_pixels : max_image_pixels();
  if (limit > 0 && pixels > limit) {
    throw ValueError(where + ": the image is " + std::to_string(std::llabs(int64_t(w))) + "x" +
                     std::to_string(std::llabs(int64_t(h))) +
                     " = " + std::to_string(pixels) + " pixels, over the limit of " +
                     std::to_string(limit) + " pixels that guards against decompression bombs "
                     "(a small file that decodes to gigabytes). If the image is genuine, raise "
                     "the limit: ImageDatasetOptions::max_image_pixels(n), decode_image's "
                     "max_pixels, or data::set_max_image_pixels(n) for the process (0: no "
                     "limit)");
  }
  detail::clear_stbi_failure_reason();
  // stbi_load converts between channel counts itself (gray -> RGB replicates, RGB -> gray uses
  // the ITU-R BT.601-style luma stb implements), as tf.io.decode_image(channels=...) does.
  std::unique_ptr<stbi_uc, void (*)(void*)> decoded(
      stbi_load_from_memory(data, len, &w, &h, &stored, channels), stbi_image_free);
  const int c = channels ? channels : stored;
  const size_t nbytes = size_t(w) * size_t(h) * size_t(c);
  if (!decoded) {
    const std::string reason = failure_reason();
    if (reason == "Out of memory") {  // stb's words for a failed malloc
      throw ResourceExhaustedError(where + ": out of memory decoding a " + std::to_string(w) +
                                   "x" + std::to_string(h) + " image (" + format_bytes(nbytes) +
                                   " of pixels)");
    }
    throw ValueError(where + ": cannot decode as an image (" + reason +
                     "); expected PNG, JPEG, BMP or GIF");
  }
  Tensor out = detail::empty_tensor({h, w, c}, uint8, where);
  std::memcpy(out.data<uint8_t>(), decoded.get(), nbytes);
  return out;
}

}  // namespace

int64_t max_image_pixels() { return g_max_image_pixels.load(std::memory_order_relaxed); }

void set_max_image_pixels(int64_t pixels) {
  if (pixels < 0) {
    throw ValueError("set_max_image_pixels: the limit must be >= 0 (0: no limit), got " +
                     std::to_string(pixels));
  }
  g_max_image_pixels.store(pixels, std::memory_order_relaxed);
}

Tensor decode_image(const std::string& path, int channels, std::optional<int64_t> max_pixels) {
  const std::string where = "decode_image: " + path;
  check_channels(channels, where);
  // Size checked before reading: stb reads at most 2 GiB, and no image file is near that.
  const std::string bytes = detail::read_file_bytes(
      path, where, uint64_t(std::numeric_limits<int>::max()),
      "the image decoder reads (2 GiB); expected a PNG, JPEG, BMP or GIF file");
  return decode(bytes, channels, max_pixels, where);
}

Tensor decode_image_from_memory(std::string_view bytes, int channels,
                                std::optional<int64_t> max_pixels, const std::string& name) {
  return decode(bytes, channels, max_pixels, "decode_image: " + name);
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
