// CIFAR-10 -> TFRecord (write_cifar10_tfrecords, what strata_cifar10_to_tfrecord runs): a tiny
// CIFAR-10 in the binary format is converted, then read back as a user would, with
// list_files + interleave(TFRecordDataset) + parse_single_example + decode_png, and every image
// and label must equal the source; the PNG folder tree likewise.
#include <filesystem>
#include <map>
#include <set>

#include "datasets/cifar10.h"
#include "datasets/image_coding.h"
#include "datasets/temp_dir.h"
#include "datasets/tfrecord/cifar10_tfrecord.h"
#include "datasets/tfrecord/example_parsing.h"
#include "datasets/tfrecord/tfrecord_dataset.h"
#include "framework/core/error.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;
using testing::TempDir;

// A batch file of records whose label is labels[i] and whose bytes vary with (seed + i), so
// every image differs.
void write_batch(const std::string& path, const std::vector<int>& labels, int seed) {
  std::vector<unsigned char> bytes;
  for (size_t i = 0; i < labels.size(); ++i) {
    bytes.push_back(static_cast<unsigned char>(labels[i]));
    for (int p = 0; p < 3 * 1024; ++p) {
      bytes.push_back(static_cast<unsigned char>(p * 7 + (seed + int(i)) * 31));
    }
  }
  testing::write_bytes(path, bytes);
}

// 5 training batches of 3 images (15) and a test batch of 4.
fs::path write_tiny_cifar(const TempDir& dir) {
  const fs::path batches = dir.path() / "cifar" / "cifar-10-batches-bin";
  fs::create_directories(batches);
  for (int b = 1; b <= 5; ++b) {
    write_batch((batches / ("data_batch_" + std::to_string(b) + ".bin")).string(),
                {b, 9, (b * 3) % 10}, 10 * b);
  }
  write_batch((batches / "test_batch.bin").string(), {3, 1, 0, 8}, 100);
  return dir.path() / "cifar";
}

const data::FeatureSpecs& spec() {
  static const data::FeatureSpecs s = {
      {"image/encoded", data::FixedLenFeature({}, uint8)},
      {"image/format", data::FixedLenFeature({}, uint8)},
      {"image/height", data::FixedLenFeature({}, int64)},
      {"image/width", data::FixedLenFeature({}, int64)},
      {"image/channels", data::FixedLenFeature({}, int64)},
      {"image/source_id", data::FixedLenFeature({}, uint8)},
      {"image/class/label", data::FixedLenFeature({}, int64)}};
  return s;
}

// Reads the split back through the pipeline; checks each record against (x, y) by its
// source_id and returns the source ids in reading order.
std::vector<int64_t> check_split(const std::string& pattern, const std::string& compression,
                                 const Tensor& x, const Tensor& y) {
  const auto ds = data::Dataset::list_files(pattern, /*shuffle=*/false)
                      .interleave([compression](const data::Element& f) {
                        return data::TFRecordDataset({data::record_bytes(f[0])}, compression);
                      }, /*cycle_length=*/1)
                      .map([](const data::Element& e) {
                        auto f = data::parse_single_example(e[0], spec());
                        EXPECT_EQ(f["image/format"].string(0), "PNG");
                        EXPECT_EQ(f["image/height"].values.item<int64_t>(), 32);
                        EXPECT_EQ(f["image/width"].values.item<int64_t>(), 32);
                        EXPECT_EQ(f["image/channels"].values.item<int64_t>(), 3);
                        const int64_t id = std::stoll(f["image/source_id"].string(0));
                        return data::Element{data::decode_png(f["image/encoded"].values),
                                             f["image/class/label"].values,
                                             Tensor::scalar<int64_t>(id)};
                      });
  std::vector<int64_t> ids;
  auto it = ds.make_iterator();
  while (auto e = it->next()) {
    const int64_t id = (*e)[2].item<int64_t>();
    ids.push_back(id);
    EXPECT_EQ((*e)[0].shape(), (Shape{32, 32, 3}));
    EXPECT_EQ((*e)[0].to_vector<int>(), x[id].to_vector<int>()) << "image " << id;
    EXPECT_EQ((*e)[1].item<int64_t>(), y[id].item<int64_t>()) << "image " << id;
  }
  return ids;
}

TEST(Cifar10TFRecord, ConvertsAndReadsBackEveryImageAndLabel) {
  TempDir dir;
  const fs::path cifar = write_tiny_cifar(dir);
  const auto [train, test] = cifar10::load_data(cifar.string());
  for (const std::string compression : {"", "GZIP"}) {
    SCOPED_TRACE(compression);
    const fs::path out = dir.path() / ("out" + compression);
    const auto files = data::write_cifar10_tfrecords(
        cifar.string(), out.string(),
        data::Cifar10TFRecordOptions().train_shards(4).compression(compression));
    EXPECT_EQ(files.train_images, 15);
    EXPECT_EQ(files.validation_images, 4);
    ASSERT_EQ(files.train.size(), 4u);
    EXPECT_EQ(files.train[0], (out / "train-00000-of-00004.tfrecord").string());
    EXPECT_EQ(files.train[3], (out / "train-00003-of-00004.tfrecord").string());
    EXPECT_EQ(files.validation, (std::vector<std::string>{
                                    (out / "validation-00000-of-00002.tfrecord").string(),
                                    (out / "validation-00001-of-00002.tfrecord").string()}));
    // Round robin: shard s holds images s, s + 4, s + 8, ... in order.
    EXPECT_EQ(check_split((out / "train-*.tfrecord").string(), compression, train.first,
                          train.second),
              (std::vector<int64_t>{0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11}));
    EXPECT_EQ(check_split((out / "validation-*").string(), compression, test.first, test.second),
              (std::vector<int64_t>{0, 2, 1, 3}));
  }
}

TEST(Cifar10TFRecord, PngFolderTreeForImageFolder) {
  TempDir dir;
  const fs::path cifar = write_tiny_cifar(dir);
  const auto [train, test] = cifar10::load_data(cifar.string());
  const fs::path png = dir.path() / "png";
  data::write_cifar10_tfrecords(cifar.string(), (dir.path() / "out").string(),
                                data::Cifar10TFRecordOptions().png_dir(png.string()));
  // Every class has its folder (ImageFolder needs all ten to number them as CIFAR-10 does).
  for (const std::string& c : cifar10::class_names()) {
    EXPECT_TRUE(fs::is_directory(png / "train" / c)) << c;
  }
  std::map<std::string, int> per_class;
  for (const auto& entry : fs::recursive_directory_iterator(png / "train")) {
    if (entry.is_regular_file()) ++per_class[entry.path().parent_path().filename().string()];
  }
  EXPECT_EQ(per_class["truck"], 6);  // label 9: each batch's second image, and batch 3's third
  EXPECT_EQ(per_class["airplane"], 0);
  // Image 2 (data_batch_1's third, label 3 = "cat") and test image 3 (label 8 = "ship").
  const fs::path cat = png / "train" / "cat" / "00002.png";
  EXPECT_EQ(data::decode_image(cat.string()).to_vector<int>(), train.first[2].to_vector<int>());
  const fs::path ship = png / "validation" / "ship" / "00003.png";
  EXPECT_EQ(data::decode_image(ship.string()).to_vector<int>(), test.first[3].to_vector<int>());
}

TEST(Cifar10TFRecord, Errors) {
  TempDir dir;
  const fs::path cifar = write_tiny_cifar(dir);
  const std::string out = (dir.path() / "out").string();
  expect_error<ValueError>(
      [&] {
        data::write_cifar10_tfrecords(cifar.string(), out,
                                      data::Cifar10TFRecordOptions().validation_shards(0));
      },
      {"write_cifar10_tfrecords", "shards must be >= 1", "got 0"});
  expect_error<ValueError>(
      [&] {
        data::write_cifar10_tfrecords(cifar.string(), out,
                                      data::Cifar10TFRecordOptions().compression("LZ4"));
      },
      {"LZ4"});
  EXPECT_FALSE(fs::exists(out));  // refused before anything is written
  const std::string none = (dir.path() / "none").string();
  expect_error<IOError>([&] { data::write_cifar10_tfrecords(none, out); },
                        {"scripts/get_datasets cifar10"});
  const Tensor images = Tensor::empty({2, 4, 4, 3}, uint8);
  const Tensor labels = tensor<int64_t>({0, 1});
  const std::string prefix = out + "/x";
  expect_error<DTypeError>(
      [&] { data::write_image_classification_tfrecords(images.cast(float32), labels, prefix, 1); },
      {"write_image_classification_tfrecords", "uint8 images", "float32 [2,4,4,3]"});
  const Tensor row = labels.reshape({1, 2});
  expect_error<ShapeError>(
      [&] { data::write_image_classification_tfrecords(images, row, prefix, 1); },
      {"integer labels [N] or [N,1] for the 2 images", "int64 [1,2]"});
  expect_error<ValueError>(
      [&] { data::write_image_folder(images, tensor<int64_t>({0, 2}), out + "/png", {"a", "b"}); },
      {"write_image_folder", "image 1 has label 2", "2 class names"});
}

}  // namespace
}  // namespace strata
