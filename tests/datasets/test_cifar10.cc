// CIFAR-10 binary batches: a few hand-made records through read_cifar_batch and load_data
// (planar CHW on disk -> NHWC), the folder lookup, and damaged files.
#include <filesystem>
#include <fstream>

#include "datasets/cifar10.h"
#include "framework/core/error.h"
#include "datasets/memory_limit.h"
#include "datasets/temp_dir.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;
using testing::TempDir;
using testing::write_bytes;

// Record with `label` whose channel c at pixel p holds (p + 50 * c + seed) % 256.
std::vector<unsigned char> record(int label, int seed) {
  std::vector<unsigned char> r(cifar10::kRecordBytes);
  r[0] = static_cast<unsigned char>(label);
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 1024; ++p) r[size_t(1 + c * 1024 + p)] = static_cast<unsigned char>((p + 50 * c + seed) % 256);
  return r;
}

void write_batch(const std::string& path, const std::vector<int>& labels, int seed) {
  std::vector<unsigned char> bytes;
  for (size_t i = 0; i < labels.size(); ++i) {
    const auto r = record(labels[i], seed + int(i));
    bytes.insert(bytes.end(), r.begin(), r.end());
  }
  write_bytes(path, bytes);
}

void write_all(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (int i = 1; i <= 5; ++i) {
    write_batch((dir / ("data_batch_" + std::to_string(i) + ".bin")).string(), {i, 9, 0}, 10 * i);
  }
  write_batch((dir / "test_batch.bin").string(), {3, 1}, 100);
}

TEST(Cifar10, ReadBatchConvertsPlanarToNHWC) {
  TempDir dir;
  const std::string path = dir.file("b.bin");
  write_batch(path, {6, 9, 0}, 0);
  auto [x, y] = cifar10::read_cifar_batch(path);
  EXPECT_EQ(x.shape(), (Shape{3, 32, 32, 3}));
  EXPECT_EQ(x.dtype(), uint8);
  EXPECT_EQ(y.shape(), (Shape{3, 1}));
  EXPECT_EQ(y.to_vector<int>(), (std::vector<int>{6, 9, 0}));
  const uint8_t* px = x.data<uint8_t>();
  // Image 1, row 2, column 5, channel c = pixel p = 2*32+5 of plane c, seed 1.
  for (int c = 0; c < 3; ++c) {
    const int p = 2 * 32 + 5;
    EXPECT_EQ(px[((1 * 32 + 2) * 32 + 5) * 3 + c], (p + 50 * c + 1) % 256);
  }
}

TEST(Cifar10, LoadDataFromParentOrBatchesFolder) {
  TempDir dir;
  write_all(dir.path() / "cifar-10-batches-bin");
  for (const std::string& d : {dir.path().string(), (dir.path() / "cifar-10-batches-bin").string()}) {
    SCOPED_TRACE(d);
    auto [train, test] = cifar10::load_data(d);
    EXPECT_EQ(train.first.shape(), (Shape{15, 32, 32, 3}));
    EXPECT_EQ(train.second.shape(), (Shape{15, 1}));
    EXPECT_EQ(train.second.to_vector<int>(),
              (std::vector<int>{1, 9, 0, 2, 9, 0, 3, 9, 0, 4, 9, 0, 5, 9, 0}));
    EXPECT_EQ(test.first.shape(), (Shape{2, 32, 32, 3}));
    EXPECT_EQ(test.second.to_vector<int>(), (std::vector<int>{3, 1}));
    // First pixel of the 4th training image (batch 2, seed 20): R, G, B.
    EXPECT_EQ(train.first[3].slice(0, 1).to_vector<int>()[0], 20);
  }
  EXPECT_EQ(cifar10::class_names().front(), "airplane");
  EXPECT_EQ(cifar10::class_names().back(), "truck");
}

TEST(Cifar10, TruncatedFile) {
  TempDir dir;
  const std::string path = dir.file("b.bin");
  write_batch(path, {1, 2}, 0);
  auto bytes = testing::read_bytes(path);
  bytes.erase(bytes.end() - 100, bytes.end());
  write_bytes(path, bytes);
  expect_error<ValueError>([&] { cifar10::read_cifar_batch(path); },
                           {path, "6046 bytes is not a multiple of the 3073-byte record",
                            "1 whole records + 2973 bytes"});
}

// A sparse 1.2 GB batch (400,000 records) where the memory cannot hold its 1.2 GB of pixels:
// the reader checks the size against the format, then reports running out of memory as a
// ResourceExhaustedError naming the file and the size (it used to die of std::bad_alloc).
TEST(Cifar10, HugeBatchUnderAMemoryLimitIsResourceExhausted) {
  TempDir dir;
  const std::string path = dir.file("data_batch_1.bin");
  { std::ofstream create(path, std::ios::binary); }
  std::filesystem::resize_file(path, uint64_t(400000) * cifar10::kRecordBytes);  // sparse
  testing::expect_error_under_memory_limit<ResourceExhaustedError>(
      [&] { cifar10::read_cifar_batch(path); }, uint64_t(512) << 20,
      {"read_cifar_batch", path, "out of memory allocating", "1228800000 bytes"});
}

// The size is checked before anything is read or allocated: 3 GB + 1 byte is no CIFAR batch,
// whatever the memory.
TEST(Cifar10, HugeFileOfTheWrongSizeIsRejectedBeforeReading) {
  TempDir dir;
  const std::string path = dir.file("data_batch_1.bin");
  { std::ofstream create(path, std::ios::binary); }
  std::filesystem::resize_file(path, uint64_t(1000000) * cifar10::kRecordBytes + 1);
  testing::expect_error_under_memory_limit<ValueError>(
      [&] { cifar10::read_cifar_batch(path); }, uint64_t(512) << 20,
      {path, "not a multiple of the 3073-byte record", "1000000 whole records + 1 bytes"});
}

TEST(Cifar10, LabelOutOfRange) {
  TempDir dir;
  const std::string path = dir.file("b.bin");
  write_batch(path, {1, 10}, 0);
  expect_error<ValueError>([&] { cifar10::read_cifar_batch(path); },
                           {path, "label 10 of record 1", "expected 0..9"});
}

TEST(Cifar10, MissingDirectoryNamesEveryPlaceLooked) {
  TempDir dir;
  const std::string d = (dir.path() / "nowhere").string();
  expect_error<IOError>([&] { cifar10::load_data(d); },
                        {"cifar10: data set not found", d + "/cifar-10-batches-bin (no such directory)",
                         d + " (no such directory)", "data_batch_1.bin",
                         "scripts/get_datasets cifar10"});
  expect_error<IOError>([&] { cifar10::read_cifar_batch(d + "/x.bin"); }, {d + "/x.bin", "no such file"});
}

}  // namespace
}  // namespace strata
