#include "datasets/cifar_sprites.h"

#include <filesystem>
#include <fstream>

#include "datasets/cifar10.h"
#include "datasets/image_io.h"
#include "framework/core/error.h"

namespace strata::data {
namespace fs = std::filesystem;
namespace {

constexpr int kPixels = cifar10::kImageSize * cifar10::kImageSize;  // 1024 = the sheet width

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  out.close();
  if (!out) throw IOError("convert_cifar_sprites: cannot write " + path.string());
}

std::vector<uint8_t> records_from_sheet(const Tensor& sheet, const std::string& png_path,
                                        const std::vector<int>& labels) {
  if (sheet.dim(1) != kPixels) {
    throw ValueError("cifar_records_from_sprite: " + png_path + ": expected a sheet 1024 pixels "
                     "wide (one 32x32 image per row), found " + sheet.shape().to_string());
  }
  const int64_t n = sheet.dim(0);
  if (n != int64_t(labels.size())) {
    throw ValueError("cifar_records_from_sprite: " + png_path + " holds " + std::to_string(n) +
                     " images (rows) but " + std::to_string(labels.size()) + " labels were given");
  }
  const uint8_t* px = sheet.data<uint8_t>();
  std::vector<uint8_t> records(size_t(n) * cifar10::kRecordBytes);
  for (int64_t r = 0; r < n; ++r) {
    const int label = labels[size_t(r)];
    if (label < 0 || label >= cifar10::kNumClasses) {
      throw ValueError("cifar_records_from_sprite: " + png_path + ": label " +
                       std::to_string(label) + " of image " + std::to_string(r) +
                       " is out of range (expected 0..9)");
    }
    uint8_t* rec = records.data() + r * cifar10::kRecordBytes;
    rec[0] = uint8_t(label);
    const uint8_t* row = px + r * kPixels * 3;  // interleaved RGB
    for (int p = 0; p < kPixels; ++p) {
      for (int c = 0; c < 3; ++c) rec[1 + c * kPixels + p] = row[p * 3 + c];
    }
  }
  return records;
}

}  // namespace

std::vector<uint8_t> cifar_records_from_sprite(const std::string& png_path,
                                               const std::vector<int>& labels) {
  return records_from_sheet(decode_image(png_path, 3), png_path, labels);
}

std::string convert_cifar_sprites(const std::string& input_dir, const std::string& output_dir,
                                  const std::vector<int>& train_labels,
                                  const std::vector<int>& test_labels) {
  const fs::path in(input_dir);
  const fs::path out = fs::path(output_dir) / "cifar-10-batches-bin";
  fs::create_directories(out);
  // The training labels are one list for five sheets: split it by each sheet's row count.
  size_t next = 0;
  for (int i = 1; i <= 5; ++i) {
    const fs::path png = in / ("data_batch_" + std::to_string(i) + ".png");
    const Tensor sheet = decode_image(png.string(), 3);
    const int64_t rows = sheet.dim(0);
    if (next + size_t(rows) > train_labels.size()) {
      throw ValueError("convert_cifar_sprites: the training sheets hold more images than the " +
                       std::to_string(train_labels.size()) + " training labels (at " +
                       png.string() + ")");
    }
    const std::vector<int> labels(train_labels.begin() + long(next),
                                  train_labels.begin() + long(next + size_t(rows)));
    next += size_t(rows);
    write_bytes(out / ("data_batch_" + std::to_string(i) + ".bin"),
                records_from_sheet(sheet, png.string(), labels));
  }
  if (next != train_labels.size()) {
    throw ValueError("convert_cifar_sprites: the training sheets hold " + std::to_string(next) +
                     " images but there are " + std::to_string(train_labels.size()) +
                     " training labels");
  }
  write_bytes(out / "test_batch.bin",
              cifar_records_from_sprite((in / "test_batch.png").string(), test_labels));
  std::string meta;
  for (const std::string& name : cifar10::class_names()) meta += name + "\n";
  write_bytes(out / "batches.meta.txt", std::vector<uint8_t>(meta.begin(), meta.end()));
  return out.string();
}

}  // namespace strata::data
