#include "datasets/image_coding.h"

#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "datasets/reading.h"
#include "datasets/stb_image_impl.h"
#include "framework/core/error.h"
#include "framework/data/bytes_tensor.h"
#include "framework/memory/format_bytes.h"

namespace strata::data {

namespace {

enum class Op { kDecodeImage, kDecodePng, kDecodeJpeg };

const char* op_name(Op op) {
  switch (op) {
    case Op::kDecodePng: return "decode_png";
    case Op::kDecodeJpeg: return "decode_jpeg";
    default: return "decode_image";
  }
}

// The formats TensorFlow's ClassifyFileFormat tells apart by their first bytes (WebP only to name
// it: stb, and so Strata, does not decode it).
enum class Format { kUnknown, kJpeg, kPng, kGif, kBmp, kWebp };

Format classify(std::string_view b) {
  auto starts = [&b](std::string_view magic) { return b.substr(0, magic.size()) == magic; };
  // JPEG's fourth byte varies (an APPn marker: e0, e1, ...), so three are checked.
  if (starts("\xff\xd8\xff")) return Format::kJpeg;
  if (starts(std::string_view("\x89PNG\r\n\x1a\n", 8))) return Format::kPng;
  if (starts("GIF8")) return Format::kGif;
  if (starts("BM")) return Format::kBmp;
  if (starts("RIFF") && b.size() > 12 && b.substr(8, 4) == "WEBP") return Format::kWebp;
  return Format::kUnknown;
}

const char* format_name(Format f) {
  switch (f) {
    case Format::kJpeg: return "JPEG";
    case Format::kPng: return "PNG";
    case Format::kGif: return "GIF";
    case Format::kBmp: return "BMP";
    case Format::kWebp: return "WebP";
    default: return "unknown";
  }
}

// "4e 6f 74 ..." : the first bytes, for a message about a format nobody recognises.
std::string first_bytes(std::string_view b) {
  std::string out;
  for (size_t i = 0; i < b.size() && i < 8; ++i) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(b[i]));
    if (!out.empty()) out += ' ';
    out += hex;
  }
  return out;
}

// Counts a GIF's images, stopping at `limit`, by walking its blocks without decoding anything
// (stb would decode and keep every frame to count them). A malformed stream ends the walk with
// what was counted; stb reports the damage when it decodes.
int gif_frames(std::string_view b, int limit) {
  size_t pos = 13;  // "GIF89a" + the logical screen descriptor
  if (b.size() < pos) return 0;
  const auto u8 = [&b](size_t i) { return static_cast<unsigned char>(b[i]); };
  if (u8(10) & 0x80) pos += size_t(3) << ((u8(10) & 7) + 1);  // global colour table
  // Data sub-blocks: a length byte, that many bytes, ... up to a zero length.
  const auto skip_sub_blocks = [&]() {
    while (pos < b.size() && u8(pos) != 0) pos += size_t(u8(pos)) + 1;
    ++pos;
  };
  int frames = 0;
  while (pos < b.size() && frames < limit) {
    const unsigned char block = u8(pos++);
    if (block == 0x21) {  // extension: a label, then sub-blocks
      ++pos;
      skip_sub_blocks();
    } else if (block == 0x2c) {  // image: descriptor, local colour table, LZW size, sub-blocks
      if (pos + 9 > b.size()) break;
      const unsigned char packed = u8(pos + 8);
      pos += 9;
      if (packed & 0x80) pos += size_t(3) << ((packed & 7) + 1);
      ++pos;
      ++frames;
      skip_sub_blocks();
    } else {  // 0x3b, the trailer, or damage
      break;
    }
  }
  return frames;
}

// The bytes of `contents` (copied to the host first when it lives elsewhere; `host` keeps them).
std::string_view contents_bytes(Op op, const Tensor& contents, Tensor& host) {
  if (contents.defined() && contents.dtype() == uint8 && contents.rank() == 1) {
    host = contents.to(Device::cpu());
    return {reinterpret_cast<const char*>(host.data<uint8_t>()), size_t(host.numel())};
  }
  const std::string expected =
      std::string(op_name(op)) + ": contents must be a 1-D uint8 tensor of the encoded image's "
      "bytes (how Strata carries a string: a TFRecordDataset element, a bytes feature's values, "
      "data::bytes_tensor(s)), found ";
  if (!contents.defined()) throw ValueError(expected + "an undefined tensor");
  const std::string found =
      expected + dtype_name(contents.dtype()) + " " + contents.shape().to_string();
  if (contents.dtype() != uint8) {
    throw DTypeError(found + "; pass the encoded bytes, not decoded pixels");
  }
  throw ShapeError(found + (contents.rank() == 0
                                ? " (one byte: TensorFlow's 0-D string is a 1-D uint8 tensor here)"
                                : "; decoded pixels need no decoding, and a batch of strings is "
                                  "decoded one string at a time"));
}

// TensorFlow's per-format channel rules (decode_image_op.cc).
template <typename Where>
void check_format_channels(Format format, int channels, const Where& where) {
  const auto refuse = [&](const char* allowed, const char* why) {
    throw ValueError(where() + ": channels=" + std::to_string(channels) + " for a " +
                     format_name(format) + " image; it takes " + allowed + " (" + why +
                     ", as in TensorFlow)");
  };
  if (format == Format::kJpeg && channels == 4) refuse("0, 1 or 3", "JPEG has no alpha");
  if (format == Format::kGif && channels != 0 && channels != 3) {
    refuse("0 or 3", "GIF decodes to RGB");
  }
  if (format == Format::kBmp && channels == 1) refuse("0, 3 or 4", "BMP decodes to colour");
}

// stb's reason for the last failure on this thread, or a generic one where it left none.
std::string failure_reason() {
  const char* reason = stbi_failure_reason();
  return reason != nullptr && *reason != '\0' ? reason : "truncated or corrupt";
}

Tensor decode(Op op, const Tensor& contents, int channels) {
  const std::string name = op_name(op);
  Tensor host;
  const std::string_view bytes = contents_bytes(op, contents, host);
  if (channels != 0 && channels != 1 && channels != 3 && channels != 4) {
    throw ValueError(name + ": channels must be 0 (the image's own), 1, 3 or 4, got " +
                     std::to_string(channels));
  }
  if (bytes.empty()) {
    throw ValueError(name + ": contents is empty (0 bytes); expected an encoded PNG, JPEG, GIF "
                     "or BMP image (an Example whose image feature is missing or empty?)");
  }
  if (bytes.size() > size_t(std::numeric_limits<int>::max())) {
    throw ValueError(name + ": contents is " + std::to_string(bytes.size()) + " bytes, more "
                     "than the image decoder reads (2 GiB); expected an encoded image");
  }
  const Format format = classify(bytes);
  // "decode_png: 2817 bytes of PNG", built only for a message (this runs once per image).
  const auto where = [&] {
    return name + ": " + std::to_string(bytes.size()) + " bytes of " + format_name(format);
  };
  if (format == Format::kUnknown) {
    throw ValueError(name + ": unknown image format (first bytes " + first_bytes(bytes) +
                     "); expected PNG, JPEG, GIF or BMP, told by their magic bytes");
  }
  if (format == Format::kWebp) {
    throw ValueError(where() + ", a format Strata does not decode; convert the images to PNG "
                     "(lossless) or JPEG");
  }
  if (op != Op::kDecodeImage) {
    // TensorFlow's decode_png / decode_jpeg decode PNG, JPEG and one-frame GIF; not these.
    if (format == Format::kBmp) {
      throw ValueError(where() + ": " + name + " does not decode BMP (as in TensorFlow); use "
                       "decode_image, which decodes PNG, JPEG, GIF and BMP");
    }
    if (format == Format::kGif && gif_frames(bytes, 2) > 1) {
      throw ValueError(where() + ": an animated GIF, which " + name + " does not decode (as in "
                       "TensorFlow); use decode_image, which gives its first frame");
    }
  }
  check_format_channels(format, channels, where);

  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = int(bytes.size());
  // The header first: its dimensions are checked before any pixel is decoded.
  detail::clear_stbi_failure_reason();
  int w = 0, h = 0, stored = 0;
  if (!stbi_info_from_memory(data, len, &w, &h, &stored)) {
    throw ValueError(where() + ": cannot decode it (" + failure_reason() +
                     "); the bytes are truncated or corrupt");
  }
  // stb's BMP header reader gives a top-down image's height as negative.
  const int64_t pixels = std::llabs(int64_t(w)) * std::llabs(int64_t(h));
  const int64_t limit = max_image_pixels();
  if (limit > 0 && pixels > limit) {
    throw ValueError(where() + ": the image is " + std::to_string(std::llabs(int64_t(w))) + "x" +
                     std::to_string(std::llabs(int64_t(h))) + " = " + std::to_string(pixels) +
                     " pixels, over the limit of " + std::to_string(limit) + " pixels that "
                     "guards against decompression bombs (a small file that decodes to "
                     "gigabytes). If the image is genuine, raise the limit for the process: "
                     "data::set_max_image_pixels(n) (0: no limit)");
  }
  // GIF decodes to RGB in TensorFlow (stb would give RGBA).
  const int c = channels != 0 ? channels : format == Format::kGif ? 3 : stored;
  detail::clear_stbi_failure_reason();
  std::unique_ptr<stbi_uc, void (*)(void*)> decoded(
      stbi_load_from_memory(data, len, &w, &h, &stored, c), stbi_image_free);
  const size_t nbytes = size_t(std::llabs(int64_t(w)) * std::llabs(int64_t(h))) * size_t(c);
  if (!decoded) {
    const std::string reason = failure_reason();
    if (reason == "Out of memory") {  // stb's words for a failed malloc
      throw ResourceExhaustedError(where() + ": out of memory decoding a " + std::to_string(w) +
                                   "x" + std::to_string(h) + " image (" + format_bytes(nbytes) +
                                   " of pixels)");
    }
    throw ValueError(where() + ": cannot decode it (" + reason +
                     "); the bytes are truncated or corrupt");
  }
  Tensor out = detail::empty_tensor({h, w, c}, uint8, name);
  std::memcpy(out.data<uint8_t>(), decoded.get(), nbytes);
  return out;
}

void append_bytes(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
}

}  // namespace

Tensor decode_image(const Tensor& contents, int channels) {
  return decode(Op::kDecodeImage, contents, channels);
}

Tensor decode_png(const Tensor& contents, int channels) {
  return decode(Op::kDecodePng, contents, channels);
}

Tensor decode_jpeg(const Tensor& contents, int channels) {
  return decode(Op::kDecodeJpeg, contents, channels);
}

Tensor encode_png(const Tensor& image) {
  if (!image.defined()) {
    throw ValueError("encode_png: expected a uint8 image [H,W,C] or [H,W], found an undefined "
                     "tensor");
  }
  if (image.dtype() != uint8) {
    throw DTypeError(std::string("encode_png: expected uint8 pixels, found ") +
                     dtype_name(image.dtype()) + " " + image.shape().to_string() +
                     "; scale to 0..255 and cast: image.cast(uint8)");
  }
  const int64_t c = image.rank() == 2 ? 1 : image.rank() == 3 ? image.dim(2) : 0;
  if (c < 1 || c > 4) {
    throw ShapeError("encode_png: expected an image [H,W,C] with C = 1..4 (gray, gray+alpha, "
                     "RGB, RGBA) or [H,W], found " + image.shape().to_string() +
                     (image.rank() == 4 ? "; encode a batch one image at a time" : ""));
  }
  const int64_t h = image.dim(0), w = image.dim(1);
  if (h == 0 || w == 0) {
    throw ShapeError("encode_png: cannot encode an empty image " + image.shape().to_string() +
                     " (PNG needs at least 1x1 pixels)");
  }
  // stb's encoder sizes its buffer of filtered rows, (w*c + 1) * h bytes, in int arithmetic.
  if ((w * c + 1) * h > int64_t(std::numeric_limits<int>::max())) {
    throw ValueError("encode_png: the image " + image.shape().to_string() + " is over the 2 GiB "
                     "the PNG encoder takes; split it into tiles");
  }
  const Tensor host = image.to(Device::cpu());
  std::string png;
  if (!stbi_write_png_to_func(append_bytes, &png, int(w), int(h), int(c),
                              host.data<uint8_t>(), int(w * c))) {
    throw ResourceExhaustedError("encode_png: out of memory encoding a " + std::to_string(h) +
                                 "x" + std::to_string(w) + "x" + std::to_string(c) + " image");
  }
  return bytes_tensor(png);
}

}  // namespace strata::data
