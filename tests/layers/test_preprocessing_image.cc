// RandomFlip, RandomCrop, RandomTranslation: exact outputs, training vs inference, seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <set>

#include <strata/strata.h>

#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;

// [n, h, w, 1] images whose pixel value is 100*n + 10*row + col.
Tensor indexed_images(int64_t n, int64_t h, int64_t w) {
  std::vector<float> v;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) v.push_back(float(100 * b + 10 * i + j));
  return Tensor::from_vector(v, Shape{n, h, w, 1});
}

TEST(PreprocessingRandomFlip, FlipsWholeImagesOnlyWhenTraining) {
  Tensor x = indexed_images(16, 2, 3);
  RandomFlip flip("horizontal", /*seed=*/7);
  EXPECT_EQ(flip.name().rfind("random_flip", 0), 0u);
  EXPECT_TRUE(flip(x, false).shares_memory_with(x));  // inference: identity
  auto y = flip(x, true).to_vector<float>();
  int flipped = 0;
  for (int b = 0; b < 16; ++b) {
    const float* img = y.data() + b * 6;
    const float base = float(100 * b);
    const bool h = img[0] == base + 2;  // each image is either untouched or mirrored
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(img[i * 3 + j], base + 10 * i + (h ? 2 - j : j));
    flipped += h;
  }
  EXPECT_GT(flipped, 0);
  EXPECT_LT(flipped, 16);

  RandomFlip vflip("vertical", 3);
  Tensor one = indexed_images(1, 2, 2).reshape({2, 2, 1});  // a single HWC image
  std::vector<float> seen;
  for (int k = 0; k < 8; ++k) {
    Tensor z = vflip(one, true);
    EXPECT_EQ(z.shape(), Shape({2, 2, 1}));
    auto v = z.to_vector<float>();
    EXPECT_TRUE(v == (std::vector<float>{0, 1, 10, 11}) || v == (std::vector<float>{10, 11, 0, 1}));
    seen.push_back(v[0]);
  }
  EXPECT_NE(std::find(seen.begin(), seen.end(), 10.f), seen.end());  // calls differ
}

TEST(PreprocessingRandomFlip, SeedsAndGlobalGeneratorAreReproducible) {
  Tensor x = indexed_images(8, 3, 3);
  RandomFlip a("horizontal_and_vertical", 11), b("horizontal_and_vertical", 11);
  EXPECT_EQ(a(x, true).to_vector<float>(), b(x, true).to_vector<float>());
  EXPECT_EQ(a(x, true).to_vector<float>(), b(x, true).to_vector<float>());
  RandomFlip g1, g2;  // seed=None: the global generator
  set_random_seed(5);
  auto first = g1(x, true).to_vector<float>();
  set_random_seed(5);
  EXPECT_EQ(g2(x, true).to_vector<float>(), first);
}

TEST(PreprocessingRandomCrop, RandomWindowsWhenTrainingCentreAtInference) {
  Tensor x = indexed_images(32, 5, 6);
  RandomCrop crop(3, 2, /*seed=*/1);
  Tensor c = crop(x, false);
  EXPECT_EQ(c.shape(), Shape({32, 3, 2, 1}));
  // centre: top (5-3)/2 = 1, left (6-2)/2 = 2
  EXPECT_EQ(c[0].to_vector<float>(), (std::vector<float>{12, 13, 22, 23, 32, 33}));
  auto t = crop(x, true).to_vector<float>();
  std::set<std::pair<int, int>> offsets;
  for (int b = 0; b < 32; ++b) {
    const float* img = t.data() + b * 6;
    const int top = int(img[0] - 100 * b) / 10, left = int(img[0] - 100 * b) % 10;
    ASSERT_TRUE(top >= 0 && top <= 2 && left >= 0 && left <= 4);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) EXPECT_EQ(img[i * 2 + j], 100 * b + 10 * (top + i) + left + j);
    offsets.insert({top, left});
  }
  EXPECT_GT(offsets.size(), 4u);  // per-image offsets
  RandomCrop same(3, 2, 1);
  same(x, false);  // inference draws nothing
  EXPECT_EQ(same(x, true).to_vector<float>(), t);
  expect_error<ShapeError>([&] { crop(zeros({1, 2, 6, 1}), true); }, {"smaller", "3x2"});
  expect_error<ShapeError>([&] { crop(zeros({4, 4}), true); }, {"[4,4]"});
  EXPECT_THROW(RandomCrop(0, 2), ValueError);
}

TEST(PreprocessingRandomTranslation, IntegerShiftsWithFillModes) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, Shape{1, 1, 4, 1});
  // width range [0.5, 0.5]: every image shifts right by exactly 2 pixels.
  auto shifted = [&](const std::string& mode) {
    RandomTranslation t(RandomTranslation::Range{0, 0}, RandomTranslation::Range{0.5, 0.5},
                        RandomTranslationOptions().fill_mode(mode).fill_value(-1).seed(0));
    return t(x, true).to_vector<float>();
  };
  EXPECT_EQ(shifted("constant"), (std::vector<float>{-1, -1, 1, 2}));
  EXPECT_EQ(shifted("reflect"), (std::vector<float>{2, 1, 1, 2}));
  EXPECT_EQ(shifted("wrap"), (std::vector<float>{3, 4, 1, 2}));
  EXPECT_EQ(shifted("nearest"), (std::vector<float>{1, 1, 1, 2}));
  // Up by a quarter of the height (negative = up), constant fill 0.
  Tensor col = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, Shape{4, 1, 1});
  RandomTranslation up(RandomTranslation::Range{-0.25, -0.25}, RandomTranslation::Range{0, 0},
                       RandomTranslationOptions().fill_mode("constant"));
  EXPECT_EQ(up(col, true).to_vector<float>(), (std::vector<float>{2, 3, 4, 0}));
  EXPECT_TRUE(up(col, false).shares_memory_with(col));
}

TEST(PreprocessingRandomTranslation, BilinearHalfPixelAndDeterminism) {
  Tensor x = Tensor::from_vector(std::vector<float>{0, 10, 20, 30}, Shape{1, 1, 4, 1});
  RandomTranslation t(RandomTranslation::Range{0, 0}, RandomTranslation::Range{0.125, 0.125},
                      RandomTranslationOptions().fill_mode("nearest"));
  // right by 0.5 px: output j reads source j - 0.5.
  EXPECT_EQ(t(x, true).to_vector<float>(), (std::vector<float>{0, 5, 15, 25}));
  Tensor imgs = random_uniform({8, 6, 6, 3}, 0, 1, float32, 3);
  RandomTranslation a(0.2, 0.3, RandomTranslationOptions().seed(9));
  RandomTranslation b(0.2, 0.3, RandomTranslationOptions().seed(9));
  EXPECT_EQ(a(imgs, true).to_vector<float>(), b(imgs, true).to_vector<float>());
  EXPECT_NE(a(imgs, true).to_vector<float>(), imgs.to_vector<float>());
}

TEST(PreprocessingImageLayers, ConfigsRoundTrip) {
  RandomFlip f("vertical", 4, "f");
  Json fc = f.get_config();
  EXPECT_EQ(fc.at("mode").as_string(), "vertical");
  EXPECT_EQ(fc.at("seed").as_int(), 4);
  EXPECT_EQ(RandomFlip::from_config(fc)->get_config(), fc);
  EXPECT_TRUE(RandomFlip().get_config().at("seed").is_null());

  RandomCrop c(24, 20, -1, "c");
  Json cc = c.get_config();
  EXPECT_EQ(cc.at("height").as_int(), 24);
  EXPECT_EQ(RandomCrop::from_config(cc)->get_config(), cc);

  RandomTranslation t(0.1, RandomTranslation::Range{-0.2, 0.3},
                      RandomTranslationOptions().fill_mode("constant").fill_value(0.5).name("t"));
  Json tc = t.get_config();
  EXPECT_DOUBLE_EQ(tc.at("height_factor").as_double(), 0.1);
  EXPECT_EQ(tc.at("width_factor").dump(), "[-0.2,0.3]");
  EXPECT_EQ(tc.at("fill_mode").as_string(), "constant");
  EXPECT_EQ(tc.at("interpolation").as_string(), "bilinear");
  EXPECT_EQ(RandomTranslation::from_config(tc)->get_config(), tc);

  expect_error<ValueError>([] { RandomFlip("diagonal"); }, {"diagonal", "horizontal"});
  expect_error<ValueError>([] { RandomTranslation(1.5, 0.1); }, {"height_factor", "[-1, 1]"});
  expect_error<ValueError>([] { RandomTranslation(0.1, 0.1, RandomTranslationOptions().fill_mode("mirror")); },
                           {"mirror"});
  Json bad = fc;
  bad.set("data_format", "channels_first");
  expect_error<ValueError>([&] { RandomFlip::from_config(bad); }, {"channels_last"});
}

}  // namespace
}  // namespace strata
