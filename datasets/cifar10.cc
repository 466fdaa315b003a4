#include "datasets/cifar10.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "datasets/data_dir.h"
#include "datasets/reading.h"
#include "framework/core/error.h"
#include "framework/ops/shape_ops.h"

namespace strata::cifar10 {
namespace {

constexpr int kPixels = kImageSize * kImageSize;
// Records read per chunk: the file is streamed into the output tensors, never held whole.
constexpr int64_t kChunkRecords = 1024;

}  // namespace

const std::vector<std::string>& class_names() {
  static const std::vector<std::string> names = {"airplane", "automobile", "bird", "cat", "deer",
                                                 "dog", "frog", "horse", "ship", "truck"};
  return names;
}

std::pair<Tensor, Tensor> read_cifar_batch(const std::string& path) {
  const std::string where = "read_cifar_batch: " + path;
  // The format fixes the size exactly (N records of 3073 bytes), so it is checked before any
  // memory is allocated for the records.
  const uint64_t size = data::detail::regular_file_size(path, where);
  if (size % kRecordBytes != 0) {
    throw ValueError(where + ": truncated or not a CIFAR-10 batch: " + std::to_string(size) +
                     " bytes is not a multiple of the " + std::to_string(kRecordBytes) +
                     "-byte record (" + std::to_string(size / kRecordBytes) + " whole records + " +
                     std::to_string(size % kRecordBytes) + " bytes)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(where + ": cannot open: " + std::strerror(errno));
  const int64_t n = int64_t(size / kRecordBytes);
  Tensor x = data::detail::empty_tensor({n, kImageSize, kImageSize, 3}, uint8, where);
  Tensor y = data::detail::empty_tensor({n, 1}, uint8, where);
  uint8_t* xp = x.data<uint8_t>();
  uint8_t* yp = y.data<uint8_t>();
  std::vector<unsigned char> chunk =
      data::detail::byte_buffer(uint64_t(std::min(n, kChunkRecords)) * kRecordBytes, where);
  for (int64_t first = 0; first < n; first += kChunkRecords) {
    const int64_t count = std::min(kChunkRecords, n - first);
    in.read(reinterpret_cast<char*>(chunk.data()), std::streamsize(count * kRecordBytes));
    if (in.gcount() != std::streamsize(count * kRecordBytes)) {
      throw IOError(where + ": read failed at record " + std::to_string(first) + " of " +
                    std::to_string(n) + " (the file changed while being read?)");
    }
    for (int64_t k = 0; k < count; ++k) {
      const int64_t r = first + k;
      const uint8_t* rec = chunk.data() + k * kRecordBytes;
      if (rec[0] >= kNumClasses) {
        throw ValueError(where + ": label " + std::to_string(rec[0]) + " of record " +
                         std::to_string(r) + " is out of range (expected 0..9)");
      }
      yp[r] = rec[0];
      // Planar CHW on disk -> interleaved HWC, Keras' channels_last layout.
      uint8_t* img = xp + r * kPixels * 3;
      for (int p = 0; p < kPixels; ++p) {
        for (int c = 0; c < 3; ++c) img[p * 3 + c] = rec[1 + c * kPixels + p];
      }
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
