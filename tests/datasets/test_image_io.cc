// decode_image / write_png round trips, hostile images (decompression bombs, truncated files),
// and resize_bilinear against tf.image.resize's values.
#include <zlib.h>

#include <string_view>

#include "datasets/image_io.h"
#include "framework/core/error.h"
#include "datasets/memory_limit.h"
#include "datasets/temp_dir.h"
#include "support/test_helpers.h"
#include "support/test_images.h"

namespace strata {
namespace {

using testing::expect_error;
using testing::TempDir;

using testing::pattern_image;

TEST(ImageIo, PngRoundTripKeepsPixelsAndChannels) {
  TempDir dir;
  for (int64_t c : {1, 3, 4}) {
    const std::string path = dir.file("img" + std::to_string(c) + ".png");
    const Tensor img = pattern_image(5, 7, c);
    data::write_png(path, img);
    const Tensor back = data::decode_image(path);
    EXPECT_EQ(back.shape(), (Shape{5, 7, c}));
    EXPECT_EQ(back.to_vector<int>(), img.to_vector<int>());
  }
}

TEST(ImageIo, DecodeConvertsChannels) {
  TempDir dir;
  const std::string path = dir.file("gray.png");
  data::write_png(path, tensor<uint8_t>({10, 200}, {1, 2}));  // [H,W] grayscale
  const Tensor rgb = data::decode_image(path, 3);
  EXPECT_EQ(rgb.shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(rgb.to_vector<int>(), (std::vector<int>{10, 10, 10, 200, 200, 200}));
  const Tensor rgba = data::decode_image(path, 4);
  EXPECT_EQ(rgba.to_vector<int>()[3], 255);  // opaque alpha added
}

TEST(ImageIo, DecodeErrors) {
  TempDir dir;
  const std::string missing = (dir.path() / "none.png").string();
  expect_error<IOError>([&] { data::decode_image(missing); }, {"decode_image", missing, "no such file"});
  const std::string junk = dir.file("junk.png");
  testing::write_bytes(junk, {'n', 'o', 't', ' ', 'p', 'n', 'g'});
  expect_error<ValueError>([&] { data::decode_image(junk); }, {"decode_image", junk, "cannot decode"});
  expect_error<ValueError>([&] { data::decode_image(junk, 2); }, {"channels must be 0, 1, 3 or 4"});
}

void put_be32(std::vector<unsigned char>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<unsigned char>(v >> shift));
}

// A PNG that is only its signature, an IHDR chunk declaring width x height RGB pixels, and an
// empty IEND: all a decompression bomb needs to announce gigabytes.
std::vector<unsigned char> png_header(uint32_t width, uint32_t height) {
  std::vector<unsigned char> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<unsigned char> ihdr = {'I', 'H', 'D', 'R'};
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8 bits, RGB, deflate, no filter, no interlace
  put_be32(png, 13);
  png.insert(png.end(), ihdr.begin(), ihdr.end());
  put_be32(png, uint32_t(crc32(0, ihdr.data(), unsigned(ihdr.size()))));
  const unsigned char iend[] = {'I', 'E', 'N', 'D'};
  put_be32(png, 0);
  png.insert(png.end(), iend, iend + 4);
  put_be32(png, uint32_t(crc32(0, iend, 4)));
  return png;
}

// A 24-bit BMP header (no pixel data) of width x height; a negative height is a top-down image.
std::vector<unsigned char> bmp_header(int32_t width, int32_t height) {
  std::vector<unsigned char> bmp = {'B', 'M'};
  auto le32 = [&bmp](uint32_t v) {
    for (int shift = 0; shift < 32; shift += 8) bmp.push_back(static_cast<unsigned char>(v >> shift));
  };
  auto le16 = [&bmp](uint32_t v) {
    bmp.push_back(static_cast<unsigned char>(v));
    bmp.push_back(static_cast<unsigned char>(v >> 8));
  };
  le32(54);  // file size (not checked)
  le32(0);   // reserved
  le32(54);  // pixel data offset
  le32(40);  // BITMAPINFOHEADER
  le32(uint32_t(width));
  le32(uint32_t(height));
  le16(1);   // planes
  le16(24);  // bits per pixel
  for (int i = 0; i < 6; ++i) le32(0);  // no compression, sizes, resolution, palette
  return bmp;
}

// Restores the process-wide pixel limit when a test ends.
struct PixelLimitGuard {
  ~PixelLimitGuard() { data::set_max_image_pixels(data::kDefaultMaxImagePixels); }
};

TEST(ImageIo, OversizedImageIsRefusedBeforeDecoding) {
  TempDir dir;
  const std::string bomb = dir.file("bomb.png");
  testing::write_bytes(bomb, png_header(15000, 15000));
  expect_error<ValueError>([&] { data::decode_image(bomb); },
                           {"decode_image", bomb, "15000x15000 = 225000000 pixels",
                            "over the limit of 89478485 pixels", "decompression bombs",
                            "max_image_pixels", "set_max_image_pixels"});
  // A top-down BMP, whose height stb reports as negative until it decodes (found by
  // tests/fuzz/fuzz_image: the limit let 213 x -327675 through and it decoded 70M pixels).
  const std::vector<unsigned char> top_down = bmp_header(213, -327675);
  expect_error<ValueError>(
      [&] {
        data::decode_image_from_memory(
            std::string_view(reinterpret_cast<const char*>(top_down.data()), top_down.size()), 3,
            1 << 18, "top_down.bmp");
      },
      {"top_down.bmp", "213x327675 = 69794775 pixels", "limit of 262144 pixels"});
  // From memory too, with the caller's own limit.
  const std::vector<unsigned char> bytes = png_header(300, 200);
  const std::string_view view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  expect_error<ValueError>([&] { data::decode_image_from_memory(view, 3, 1000, "header.png"); },
                           {"header.png", "300x200 = 60000 pixels", "limit of 1000 pixels"});
}

TEST(ImageIo, PixelLimitIsConfigurable) {
  PixelLimitGuard restore;
  TempDir dir;
  const std::string path = dir.file("img.png");
  data::write_png(path, pattern_image(5, 7, 3));  // 35 pixels
  EXPECT_EQ(data::max_image_pixels(), data::kDefaultMaxImagePixels);
  EXPECT_EQ(data::decode_image(path, 0, 35).shape(), (Shape{5, 7, 3}));  // the limit is inclusive
  expect_error<ValueError>([&] { data::decode_image(path, 0, 34); }, {"over the limit of 34"});
  data::set_max_image_pixels(20);
  expect_error<ValueError>([&] { data::decode_image(path); }, {"over the limit of 20"});
  EXPECT_EQ(data::decode_image(path, 0, 0).shape(), (Shape{5, 7, 3}));  // 0: no limit
  data::set_max_image_pixels(0);
  EXPECT_EQ(data::decode_image(path).shape(), (Shape{5, 7, 3}));
  expect_error<ValueError>([] { data::set_max_image_pixels(-1); }, {"must be >= 0", "-1"});
}

// A PNG cut short used to be reported with an empty reason, "()", or a fragment of a chunk
// name ("I", "ID"): stb's reason for an unknown chunk is the chunk's name.
TEST(ImageIo, TruncatedPngNamesAReason) {
  TempDir dir;
  const std::string path = dir.file("cut.png");
  data::write_png(path, pattern_image(32, 32, 3));
  const std::vector<unsigned char> full = testing::read_bytes(path);
  int failures = 0;
  for (size_t n = 0; n + 12 < full.size(); ++n) {  // the last 12 bytes are IEND, which stb skips
    SCOPED_TRACE(n);
    testing::write_bytes(path, {full.begin(), full.begin() + long(n)});
    try {
      data::decode_image(path);
      ADD_FAILURE() << "a PNG cut to " << n << " bytes decoded";
    } catch (const ValueError& e) {
      ++failures;
      const std::string what = e.what();
      const size_t open = what.find("cannot decode as an image (");
      ASSERT_NE(open, std::string::npos) << what;
      const size_t start = open + std::string("cannot decode as an image (").size();
      const std::string reason = what.substr(start, what.find(')', start) - start);
      EXPECT_GE(reason.size(), 8u) << what;  // a phrase, not "" or "ID"
    }
  }
  EXPECT_GT(failures, 0);
  // Header only, no pixel data at all.
  testing::write_bytes(path, png_header(4, 4));
  expect_error<ValueError>([&] { data::decode_image(path); }, {path, "cannot decode"});
}

// Found by tests/fuzz/fuzz_image: stb allocated an IDAT chunk's declared length (2 GiB here)
// before checking the file held it. Under a memory limit that was a ResourceExhaustedError for
// a 60-byte file; now it is the corrupt file it is, and nothing large is allocated.
TEST(ImageIo, PngChunkLongerThanTheFileIsCorruptWithoutAllocatingIt) {
  std::vector<unsigned char> png = png_header(4, 4);
  png.resize(png.size() - 12);  // drop IEND
  put_be32(png, 0x7ffffff0);    // an IDAT that claims 2 GiB
  png.insert(png.end(), {'I', 'D', 'A', 'T', 0x78, 0x9c, 0, 0});
  const std::string bytes(png.begin(), png.end());
  testing::expect_error_under_memory_limit<ValueError>(
      [&] { data::decode_image_from_memory(bytes, 3, std::nullopt, "long_chunk.png"); },
      uint64_t(512) << 20, {"long_chunk.png", "cannot decode", "Corrupt PNG"});
}

// Found by tests/fuzz/fuzz_image: a JPEG Huffman table whose 16 counts add up to more than 256
// symbols made stb_image 2.27 write past its 257-entry tables (caught by the sanitizer build).
TEST(ImageIo, JpegHuffmanTableOverflowIsCorrupt) {
  std::vector<unsigned char> jpg = {0xff, 0xd8, 0xff, 0xc4};
  const size_t symbols = 16 * 255;
  const size_t length = 2 + 17 + symbols;
  jpg.push_back(static_cast<unsigned char>(length >> 8));
  jpg.push_back(static_cast<unsigned char>(length & 255));
  jpg.push_back(0x00);  // a DC table, number 0
  jpg.insert(jpg.end(), 16, 0xff);
  jpg.insert(jpg.end(), symbols, 0x01);
  const std::string bytes(jpg.begin(), jpg.end());
  expect_error<ValueError>(
      [&] { data::decode_image_from_memory(bytes, 3, std::nullopt, "huffman.jpg"); },
      {"huffman.jpg", "cannot decode"});
}

TEST(ImageIo, ResizeBilinearUpsamplesLikeTensorFlow) {
  // tf.image.resize([[0,1],[2,3]][..., None], [4, 4], "bilinear") (half-pixel centres).
  const Tensor img = tensor<uint8_t>({0, 1, 2, 3}, {2, 2, 1});
  const Tensor out = data::resize_bilinear(img, 4, 4);
  EXPECT_EQ(out.dtype(), float32);
  EXPECT_EQ(out.shape(), (Shape{4, 4, 1}));
  EXPECT_EQ(testing::values(out), (std::vector<double>{0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5,
                                                       1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3}));
}

TEST(ImageIo, ResizeBilinearDownsamplesAndBatches) {
  // 4x4 -> 2x2 samples at 0.5 and 2.5: the mean of each 2x2 block's inner pixels.
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[size_t(i)] = float(i);
  const Tensor batch = stack({Tensor::from_vector(v, {4, 4, 1}), Tensor::from_vector(v, {4, 4, 1})});
  const Tensor out = data::resize_bilinear(batch, 2, 2);
  EXPECT_EQ(out.shape(), (Shape{2, 2, 2, 1}));
  EXPECT_EQ(testing::values(out[1]), (std::vector<double>{2.5, 4.5, 10.5, 12.5}));
  // Same size is the identity, as float32.
  EXPECT_EQ(testing::values(data::resize_bilinear(batch[0], 4, 4)),
            std::vector<double>(v.begin(), v.end()));
  expect_error<ShapeError>([] { data::resize_bilinear(zeros({4, 4}), 2, 2); }, {"resize_bilinear", "[4,4]"});
  expect_error<ValueError>([] { data::resize_bilinear(zeros({4, 4, 1}), 0, 2); }, {"resize_bilinear"});
}

}  // namespace
}  // namespace strata
