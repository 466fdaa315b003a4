// decode_image / write_png round trips and resize_bilinear against tf.image.resize's values.
#include "datasets/image_io.h"
#include "framework/core/error.h"
#include "datasets/temp_dir.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;
using testing::TempDir;

Tensor pattern(int64_t h, int64_t w, int64_t c) {
  std::vector<uint8_t> v(size_t(h * w * c));
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(i * 37 % 256);
  return Tensor::from_vector(v, {h, w, c});
}

TEST(ImageIo, PngRoundTripKeepsPixelsAndChannels) {
  TempDir dir;
  for (int64_t c : {1, 3, 4}) {
    const std::string path = dir.file("img" + std::to_string(c) + ".png");
    const Tensor img = pattern(5, 7, c);
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
