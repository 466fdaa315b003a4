#include "datasets/cifar10.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "datasets/data_dir.h"
#include "framework/core/error.h"
#include "framework/ops/shape_ops.h"

namespace strata::cifar10 {
namespace {

constexpr int kPixels = kImageSize * kImageSize;

std::vector<char> read_file(const std::string& path, const char* op) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw IOError(std::string(op) + ": " + path + ": no such file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(std::string(op) + ": " + path + ": cannot open: " + std::strerror(errno));
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

const std::vector<std::string>& class_names() {
  static const std::vector<std::string> names = {"airplane", "automobile", "bird", "cat", "deer",
                                                 "dog", "frog", "horse", "ship", "truck"};
  return names;
}

std::pair<Tensor, Tensor> read_cifar_batch(const std::string& path) {
  const std::vector<char> bytes = read_file(path, "read_cifar_batch");
  if (bytes.size() % kRecordBytes != 0) {
    throw ValueError("read_cifar_batch: " + path + ": truncated or not a CIFAR-10 batch: " +
                     std::to_string(bytes.size()) + " bytes is not a multiple of the " +
                     std::to_string(kRecordBytes) + "-byte record (" +
                     std::to_string(bytes.size() / kRecordBytes) + " whole records + " +
                     std::to_string(bytes.size() % kRecordBytes) + " bytes)");
  }
  const int64_t n = int64_t(bytes.size() / kRecordBytes);
  Tensor x = Tensor::empty({n, kImageSize, kImageSize, 3}, uint8);
  Tensor y = Tensor::empty({n, 1}, uint8);
  uint8_t* xp = x.data<uint8_t>();
  uint8_t* yp = y.data<uint8_t>();
  for (int64_t r = 0; r < n; ++r) {
    const auto* rec = reinterpret_cast<const uint8_t*>(bytes.data()) + r * kRecordBytes;
    if (rec[0] >= kNumClasses) {
      throw ValueError("read_cifar_batch: " + path + ": label " + std::to_string(rec[0]) +
                       " of record " + std::to_string(r) + " is out of range (expected 0..9)");
    }
    yp[r] = rec[0];
    // Planar CHW on disk -> interleaved HWC, Keras' channels_last layout.
    uint8_t* img = xp + r * kPixels * 3;
    for (int p = 0; p < kPixels; ++p) {
      for (int c = 0; c < 3; ++c) img[p * 3 + c] = rec[1 + c * kPixels + p];
    }
  }
  return {x, y};
}

std::pair<std::pair<Tensor, Tensor>, std::pair<Tensor, Tensor>> load_data(const std::string& dir) {
  std::vector<data::FileAlternatives> files;
  for (int i = 1; i <= 5; ++i) files.push_back({"data_batch_" + std::to_string(i) + ".bin"});
  files.push_back({"test_batch.bin"});
  const std::string found =
      data::locate_dataset("cifar10", dir, files, {"cifar-10-batches-bin", ""});
  std::vector<Tensor> xs, ys;
  for (int i = 0; i < 5; ++i) {
    auto [x, y] = read_cifar_batch(data::find_file(found, files[size_t(i)]));
    xs.push_back(x);
    ys.push_back(y);
  }
  auto test = read_cifar_batch(data::find_file(found, files[5]));
  return {{concat(xs, 0), concat(ys, 0)}, test};
}

}  // namespace strata::cifar10
