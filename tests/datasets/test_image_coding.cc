// decode_image / decode_png / decode_jpeg / encode_png on bytes held in tensors: round trips,
// channel conversion, TensorFlow's format rules (its image_ops_test.py / decode_image_op_test.py
// cases where they apply), and hostile contents.
#include <stb/stb_image_write.h>
#include <zlib.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "datasets/image_coding.h"
#include "datasets/temp_dir.h"
#include "framework/core/error.h"
#include "framework/data/bytes_tensor.h"
#include "support/test_images.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using data::bytes_tensor;
using testing::expect_error;
using testing::gif_bytes;

using testing::pattern_image;

// image_ops_test.py's _SimpleColorRamp: 200x256 RGB, R = row, G = column, B = their mean.
Tensor color_ramp() {
  const int64_t h = 200, w = 256;
  std::vector<uint8_t> v(size_t(h * w * 3));
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t j = 0; j < w; ++j) {
      uint8_t* p = &v[size_t((i * w + j) * 3)];
      p[0] = uint8_t(i);
      p[1] = uint8_t(j);
      p[2] = uint8_t((i + j) >> 1);
    }
  }
  return Tensor::from_vector(v, {h, w, 3});
}

// The first `k` channels of an [H,W,C] image.
Tensor first_channels(const Tensor& image, int64_t k) {
  const int64_t h = image.dim(0), w = image.dim(1), c = image.dim(2);
  std::vector<uint8_t> src = image.to_vector<uint8_t>(), v;
  for (int64_t p = 0; p < h * w; ++p)
    for (int64_t ch = 0; ch < k; ++ch) v.push_back(src[size_t(p * c + ch)]);
  return Tensor::from_vector(v, {h, w, k});
}

double mean_abs_error(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const std::vector<int> x = a.to_vector<int>(), y = b.to_vector<int>();
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += std::abs(x[i] - y[i]);
  return sum / double(x.size());
}

void append(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
}

std::string jpeg_bytes(const Tensor& image, int quality) {
  std::string jpg;
  stbi_write_jpg_to_func(append, &jpg, int(image.dim(1)), int(image.dim(0)), int(image.dim(2)),
                         image.data<uint8_t>(), quality);
  return jpg;
}

std::string bmp_bytes(const Tensor& image) {
  std::string bmp;
  stbi_write_bmp_to_func(append, &bmp, int(image.dim(1)), int(image.dim(0)), int(image.dim(2)),
                         image.data<uint8_t>());
  return bmp;
}

std::string as_string(const Tensor& bytes) { return data::record_bytes(bytes); }

TEST(ImageCoding, EncodePngDecodesBackForEveryChannelCount) {
  for (int64_t c : {1, 2, 3, 4}) {
    SCOPED_TRACE(c);
    const Tensor img = pattern_image(5, 7, c);
    const Tensor png = data::encode_png(img);
    EXPECT_EQ(png.dtype(), uint8);
    EXPECT_EQ(png.rank(), 1);
    EXPECT_EQ(as_string(png).substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    for (const Tensor& back : {data::decode_png(png), data::decode_image(png)}) {
      EXPECT_EQ(back.shape(), (Shape{5, 7, c}));
      EXPECT_EQ(back.to_vector<int>(), img.to_vector<int>());
    }
  }
  // [H,W] is one gray channel.
  const Tensor gray = tensor<uint8_t>({0, 100, 200, 255, 1, 2}, {2, 3});
  const Tensor back = data::decode_png(data::encode_png(gray));
  EXPECT_EQ(back.shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(back.to_vector<int>(), gray.to_vector<int>());
}

// image_ops_test.py PngTest.testSynthetic and testSyntheticTwoChannel: lossless, and a smooth
// ramp compresses well (TensorFlow's zlib at level 7 gives 400-750 bytes of 153,600; stb's
// encoder is less thorough: 1,808 bytes, hence a looser bound).
TEST(ImageCoding, ColorRampRoundTripsLikeTensorFlow) {
  const Tensor ramp = color_ramp();
  const Tensor png = data::encode_png(ramp);
  EXPECT_EQ(data::decode_png(png).to_vector<int>(), ramp.to_vector<int>());
  EXPECT_GE(png.numel(), 400);
  EXPECT_LE(png.numel(), 153600 / 20);
  const Tensor gray_alpha = first_channels(ramp, 2);
  const Tensor back = data::decode_png(data::encode_png(gray_alpha));
  EXPECT_EQ(back.dim(2), 2);
  EXPECT_EQ(back.to_vector<int>(), gray_alpha.to_vector<int>());
}

// PngTest.testExisting / DecodeImageOpTest.testPng: every channel request on a gray and an RGBA
// image; the count asked for (or the file's, for 0) comes back, and decode_png == decode_image.
TEST(ImageCoding, ChannelConversion) {
  const Tensor gray = tensor<uint8_t>({10, 200}, {1, 2, 1});
  const Tensor rgba = tensor<uint8_t>({255, 0, 0, 128, 0, 0, 255, 255}, {1, 2, 4});
  for (const Tensor& src : {gray, rgba}) {
    const Tensor png = data::encode_png(src);
    for (int channels : {0, 1, 3, 4}) {
      SCOPED_TRACE(channels);
      const Tensor a = data::decode_png(png, channels), b = data::decode_image(png, channels);
      EXPECT_EQ(a.shape(), (Shape{1, 2, channels ? channels : src.dim(2)}));
      EXPECT_EQ(a.to_vector<int>(), b.to_vector<int>());
      if (channels == src.dim(2)) {
        EXPECT_EQ(data::decode_png(data::encode_png(a)).to_vector<int>(), a.to_vector<int>());
      }
    }
  }
  const Tensor png = data::encode_png(gray);
  EXPECT_EQ(data::decode_png(png, 3).to_vector<int>(),
            (std::vector<int>{10, 10, 10, 200, 200, 200}));
  EXPECT_EQ(data::decode_png(png, 4).to_vector<int>(),
            (std::vector<int>{10, 10, 10, 255, 200, 200, 200, 255}));  // opaque alpha added
  // RGB -> gray is a luma: pure red is darker than white, and not zero.
  const std::vector<int> luma = data::decode_png(data::encode_png(rgba), 1).to_vector<int>();
  EXPECT_GT(luma[0], 0);
  EXPECT_LT(luma[0], 255);
  expect_error<ValueError>([&] { data::decode_png(png, 2); },
                           {"decode_png", "channels must be 0", "1, 3 or 4", "got 2"});
}

// JpegTest.testSynthetic / DecodeImageOpTest.testJpeg: a JPEG of the ramp decodes close to it,
// decode_image gives what decode_jpeg gives, and 4 channels are refused. TensorFlow's decode_png
// and decode_jpeg share one kernel that decodes PNG, JPEG and GIF alike, so decode_png reads the
// JPEG too and decode_jpeg a PNG.
TEST(ImageCoding, JpegDecodesApproximately) {
  const Tensor ramp = color_ramp();
  const Tensor jpg = bytes_tensor(jpeg_bytes(ramp, 95));
  const Tensor image = data::decode_jpeg(jpg);
  EXPECT_EQ(image.shape(), (Shape{200, 256, 3}));
  EXPECT_LT(mean_abs_error(image, ramp), 0.6);  // TensorFlow's bound for its libjpeg encoder
  EXPECT_EQ(data::decode_image(jpg).to_vector<int>(), image.to_vector<int>());
  EXPECT_EQ(data::decode_png(jpg).to_vector<int>(), image.to_vector<int>());
  EXPECT_EQ(data::decode_jpeg(jpg, 1).shape(), (Shape{200, 256, 1}));
  expect_error<ValueError>([&] { data::decode_image(jpg, 4); },
                           {"decode_image", "JPEG", "channels=4", "0, 1 or 3"});
  expect_error<ValueError>([&] { data::decode_jpeg(jpg, 4); },
                           {"decode_jpeg", "JPEG has no alpha"});
  const Tensor small = pattern_image(4, 6, 3);
  EXPECT_EQ(data::decode_jpeg(data::encode_png(small)).to_vector<int>(), small.to_vector<int>());
}

// As in TensorFlow: decode_png / decode_jpeg refuse BMP ("use decode_image") and animated GIF;
// decode_image reads both (a GIF's first frame, as RGB).
TEST(ImageCoding, DecodePngAndJpegRefuseBmpAndAnimatedGif) {
  const Tensor img = pattern_image(3, 5, 3);
  const Tensor bmp = bytes_tensor(bmp_bytes(img));
  EXPECT_EQ(data::decode_image(bmp).to_vector<int>(), img.to_vector<int>());
  EXPECT_EQ(data::decode_image(bmp, 4).dim(2), 4);
  for (auto* op : {&data::decode_png, &data::decode_jpeg}) {
    const std::string name = op == &data::decode_png ? "decode_png" : "decode_jpeg";
    expect_error<ValueError>([&] { op(bmp, 0); }, {name, "BMP", "use decode_image"});
  }
  expect_error<ValueError>([&] { data::decode_image(bmp, 1); }, {"BMP", "0, 3 or 4"});

  const Tensor still = bytes_tensor(gif_bytes(3, 2, 1));
  const Tensor first = data::decode_png(still);  // a one-frame GIF: fine, 3 channels
  EXPECT_EQ(first.shape(), (Shape{2, 3, 3}));
  // Pixel i is palette entry i % 4: red, green, blue, white, red, green.
  EXPECT_EQ(first.to_vector<int>(), (std::vector<int>{255, 0, 0, 0, 255, 0, 0, 0, 255,
                                                      255, 255, 255, 255, 0, 0, 0, 255, 0}));
  const Tensor animated = bytes_tensor(gif_bytes(3, 2, 3));
  for (auto* op : {&data::decode_png, &data::decode_jpeg}) {
    expect_error<ValueError>([&] { op(animated, 0); }, {"animated GIF", "use decode_image"});
  }
  EXPECT_EQ(data::decode_image(animated).to_vector<int>(), first.to_vector<int>());
  EXPECT_EQ(data::decode_image(animated, 3).shape(), (Shape{2, 3, 3}));
  // DecodeImageOpTest.testGif: GIF is RGB only.
  expect_error<ValueError>([&] { data::decode_image(animated, 1); }, {"GIF", "0 or 3"});
  expect_error<ValueError>([&] { data::decode_image(animated, 4); }, {"GIF", "0 or 3"});
}

// DecodeImageOpTest.testInvalidBytes, and contents that are empty or of a format stb lacks.
TEST(ImageCoding, UnknownFormatAndEmptyContents) {
  expect_error<ValueError>([] { data::decode_image(bytes_tensor("ThisIsNotAnImage!")); },
                           {"decode_image", "unknown image format", "54 68 69 73",
                            "PNG, JPEG, GIF or BMP"});
  expect_error<ValueError>([] { data::decode_png(bytes_tensor("")); },
                           {"decode_png", "empty", "0 bytes"});
  const Tensor webp = bytes_tensor(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16));
  expect_error<ValueError>([&] { data::decode_image(webp); },
                           {"decode_image", "WebP", "does not decode", "PNG"});
}

TEST(ImageCoding, TruncatedOrCorruptBytesAreErrors) {
  const std::string png = as_string(data::encode_png(pattern_image(16, 16, 3)));
  int failures = 0;
  // The last 12 bytes are IEND, which stb does not need.
  for (size_t n = 1; n + 12 < png.size(); ++n) {
    SCOPED_TRACE(n);
    try {
      data::decode_png(bytes_tensor(png.substr(0, n)));
      ADD_FAILURE() << "a PNG cut to " << n << " bytes decoded";
    } catch (const ValueError& e) {
      ++failures;
      const std::string what = e.what();
      // Cut inside the signature, the bytes are no longer recognisably PNG.
      EXPECT_NE(what.find(n < 8 ? "unknown image format" : "bytes of PNG: cannot decode it ("),
                std::string::npos) << what;
    }
  }
  EXPECT_GT(failures, 0);
  // A damaged header (bit depth 7) and damaged compressed data.
  std::string bad_depth = png;
  bad_depth[24] = 7;
  expect_error<ValueError>([&] { data::decode_png(bytes_tensor(bad_depth)); },
                           {"decode_png", "PNG", "cannot decode", "truncated or corrupt"});
  std::string bad_data = png;
  for (size_t i = 41; i < 60 && i < bad_data.size(); ++i) bad_data[i] = char(0xff);
  expect_error<ValueError>([&] { data::decode_png(bytes_tensor(bad_data)); },
                           {"decode_png", "PNG", "cannot decode"});
  // A JPEG cut short: stb may recover the start of its scan (libjpeg with TensorFlow's
  // try_recover_truncated does too), but a cut header is an error; never a crash.
  const std::string jpg = jpeg_bytes(pattern_image(16, 16, 3), 90);
  for (size_t n = 1; n < jpg.size(); n += 7) {
    SCOPED_TRACE(n);
    try {
      EXPECT_EQ(data::decode_jpeg(bytes_tensor(jpg.substr(0, n))).shape(), (Shape{16, 16, 3}));
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("decode_jpeg"), std::string::npos);
    }
  }
  expect_error<ValueError>([&] { data::decode_jpeg(bytes_tensor(jpg.substr(0, 20))); },
                           {"decode_jpeg", "JPEG", "cannot decode"});
}

TEST(ImageCoding, ContentsMustBeOneDimensionalUint8) {
  const Tensor png = data::encode_png(pattern_image(2, 2, 3));
  expect_error<DTypeError>([&] { data::decode_png(png.cast(int32)); },
                           {"decode_png", "1-D uint8", "found int32 [", "encoded bytes"});
  expect_error<ShapeError>([] { data::decode_image(pattern_image(4, 4, 3)); },
                           {"decode_image", "1-D uint8", "found uint8 [4,4,3]", "decoded pixels"});
  expect_error<ShapeError>([] { data::decode_jpeg(Tensor::scalar<uint8_t>(0xff)); },
                           {"decode_jpeg", "found uint8 []", "0-D string"});
  expect_error<ValueError>([] { data::decode_png(Tensor()); }, {"decode_png", "undefined"});
}

// Restores the process-wide pixel limit when a test ends.
struct PixelLimitGuard {
  ~PixelLimitGuard() { data::set_max_image_pixels(data::kDefaultMaxImagePixels); }
};

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += char((v >> shift) & 255);
}

// A PNG signature and an IHDR declaring width x height RGB pixels: all a bomb needs.
std::string png_header(uint32_t width, uint32_t height) {
  std::string png("\x89PNG\r\n\x1a\n", 8), ihdr = "IHDR";
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);
  put_be32(png, 13);
  png += ihdr;
  put_be32(png, uint32_t(crc32(0, reinterpret_cast<const Bytef*>(ihdr.data()), 17)));
  return png;
}

TEST(ImageCoding, DecompressionBombIsRefusedFromTheHeader) {
  PixelLimitGuard restore;
  expect_error<ValueError>([] { data::decode_png(bytes_tensor(png_header(15000, 15000))); },
                           {"decode_png", "15000x15000 = 225000000 pixels",
                            "over the limit of 89478485", "decompression bombs",
                            "set_max_image_pixels"});
  const Tensor png = data::encode_png(pattern_image(5, 7, 3));  // 35 pixels
  data::set_max_image_pixels(34);
  expect_error<ValueError>([&] { data::decode_image(png); }, {"over the limit of 34"});
  data::set_max_image_pixels(35);
  EXPECT_EQ(data::decode_image(png).shape(), (Shape{5, 7, 3}));
}

TEST(ImageCoding, EncodePngErrors) {
  expect_error<DTypeError>([] { data::encode_png(zeros({2, 2, 3})); },
                           {"encode_png", "uint8", "found float32 [2,2,3]", "cast"});
  expect_error<ShapeError>([] { data::encode_png(pattern_image(2, 2, 5)); },
                           {"encode_png", "C = 1..4", "[2,2,5]"});
  expect_error<ShapeError>([] { data::encode_png(Tensor::empty({1, 2, 2, 3}, uint8)); },
                           {"encode_png", "[1,2,2,3]", "one image at a time"});
  expect_error<ShapeError>([] { data::encode_png(Tensor::empty({0, 3, 3}, uint8)); },
                           {"encode_png", "empty image", "[0,3,3]"});
}

// decode_image(path) (image_io.h) and decode_image(contents) are one overload set: a tensor picks
// the bytes, a string (literal or std::string) the file.
TEST(ImageCoding, PathAndContentsOverloadsResolve) {
  testing::TempDir dir;
  const Tensor img = pattern_image(3, 4, 3);
  const std::string path = dir.file("img.png");
  data::write_png(path, img);
  EXPECT_EQ(data::decode_image(path).to_vector<int>(), img.to_vector<int>());
  expect_error<IOError>([] { data::decode_image("no/such/image.png"); },
                        {"decode_image", "no/such/image.png"});
  expect_error<IOError>([] { data::decode_image("no/such/image.png", 3); }, {"no/such/image.png"});
  const Tensor contents = bytes_tensor(as_string(data::encode_png(img)));
  EXPECT_EQ(data::decode_image(contents).to_vector<int>(), img.to_vector<int>());
  EXPECT_EQ(data::decode_image(contents, 1).shape(), (Shape{3, 4, 1}));
}

}  // namespace
}  // namespace strata
