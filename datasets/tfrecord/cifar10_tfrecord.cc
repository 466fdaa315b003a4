#include "datasets/tfrecord/cifar10_tfrecord.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string_view>

#include "datasets/cifar10.h"
#include "datasets/image_coding.h"
#include "datasets/tfrecord/example_builder.h"
#include "framework/core/error.h"
#include "framework/data/bytes_tensor.h"
#include "framework/summary/record_writer.h"

namespace strata::data {

namespace {

namespace fs = std::filesystem;

// The labels as int64, after checking both tensors describe the same N images.
std::vector<int64_t> checked_labels(const char* op, const Tensor& images, const Tensor& labels) {
  if (images.dtype() != uint8) {
    throw DTypeError(std::string(op) + ": expected uint8 images [N,H,W,C], found " +
                     dtype_name(images.dtype()) + " " + images.shape().to_string() +
                     "; scale to 0..255 and cast: images.cast(uint8)");
  }
  if (images.rank() != 4 || images.dim(3) < 1 || images.dim(3) > 4) {
    throw ShapeError(std::string(op) + ": expected images [N,H,W,C] with C = 1..4, found " +
                     images.shape().to_string());
  }
  const std::string expected = std::string(op) + ": expected integer labels [N] or [N,1] for " +
                               "the " + std::to_string(images.dim(0)) + " images, found " +
                               dtype_name(labels.dtype()) + " " + labels.shape().to_string();
  if (!is_integral(labels.dtype())) throw DTypeError(expected);
  const bool column = labels.rank() == 2 && labels.dim(1) == 1;
  if ((labels.rank() != 1 && !column) || labels.dim(0) != images.dim(0)) {
    throw ShapeError(expected);
  }
  return labels.to_vector<int64_t>();
}

// "<prefix>-00003-of-00010.tfrecord", tfrecord_lib's shard names.
std::string shard_path(const std::string& prefix, int shard, int shards) {
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d.tfrecord", shard, shards);
  return prefix + suffix;
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) throw IOError("write_image_folder: " + path.string() + ": cannot write");
}

// <dir>/<class>/00042.png for image 42.
fs::path folder_path(const fs::path& dir, const std::vector<std::string>& class_names,
                     int64_t label, int64_t index) {
  if (label < 0 || label >= int64_t(class_names.size())) {
    throw ValueError("write_image_folder: image " + std::to_string(index) + " has label " +
                     std::to_string(label) + ", but there are " +
                     std::to_string(class_names.size()) + " class names (labels 0.." +
                     std::to_string(int64_t(class_names.size()) - 1) + ")");
  }
  char name[32];
  std::snprintf(name, sizeof name, "%05lld.png", static_cast<long long>(index));
  return dir / class_names[size_t(label)] / name;
}

void create_folders(const fs::path& dir, const std::vector<std::string>& class_names) {
  std::error_code ec;
  for (const std::string& c : class_names) {
    fs::create_directories(dir / c, ec);
    if (ec) throw IOError("write_image_folder: " + (dir / c).string() + ": " + ec.message());
  }
}

// One split: each image encoded once, then written to its shard and, when `folder` is set, to
// the folder tree too.
std::vector<std::string> write_split(const Tensor& images, const Tensor& labels,
                                     const std::string& prefix, int shards,
                                     const std::string& compression, const fs::path& folder,
                                     const std::vector<std::string>& class_names) {
  const char* op = "write_image_classification_tfrecords";
  const std::vector<int64_t> y = checked_labels(op, images, labels);
  if (shards < 1) {
    throw ValueError(std::string(op) + ": " + prefix + ": the number of shards must be >= 1, "
                     "got " + std::to_string(shards));
  }
  const TFRecordCompression kind = tfrecord_compression_from_name(compression);
  std::vector<std::string> paths;
  std::vector<std::unique_ptr<TFRecordWriter>> writers;
  for (int s = 0; s < shards; ++s) {
    paths.push_back(shard_path(prefix, s, shards));
    writers.push_back(std::make_unique<TFRecordWriter>(paths.back(), kind));
  }
  if (!folder.empty()) create_folders(folder, class_names);
  const int64_t h = images.dim(1), w = images.dim(2), c = images.dim(3);
  for (int64_t i = 0; i < images.dim(0); ++i) {
    const std::string png = record_bytes(encode_png(images[i]));
    writers[size_t(i % shards)]->write(ExampleBuilder()
                                           .add_bytes("image/encoded", png)
                                           .add_bytes("image/format", "PNG")
                                           .add_int64("image/height", {h})
                                           .add_int64("image/width", {w})
                                           .add_int64("image/channels", {c})
                                           .add_bytes("image/source_id", std::to_string(i))
                                           .add_int64("image/class/label", {y[size_t(i)]})
                                           .serialize());
    if (!folder.empty()) write_file(folder_path(folder, class_names, y[size_t(i)], i), png);
  }
  for (auto& writer : writers) writer->close();  // errors surface here, not in the destructor
  return paths;
}

void make_output_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IOError("write_cifar10_tfrecords: " + dir + ": cannot create: " + ec.message());
}

}  // namespace

std::vector<std::string> write_image_classification_tfrecords(const Tensor& images,
                                                              const Tensor& labels,
                                                              const std::string& path_prefix,
                                                              int num_shards,
                                                              const std::string& compression) {
  return write_split(images, labels, path_prefix, num_shards, compression, {}, {});
}

void write_image_folder(const Tensor& images, const Tensor& labels, const std::string& dir,
                        const std::vector<std::string>& class_names) {
  const std::vector<int64_t> y = checked_labels("write_image_folder", images, labels);
  create_folders(dir, class_names);
  for (int64_t i = 0; i < images.dim(0); ++i) {
    const fs::path path = folder_path(dir, class_names, y[size_t(i)], i);
    write_file(path, record_bytes(encode_png(images[i])));
  }
}

Cifar10TFRecordFiles write_cifar10_tfrecords(const std::string& cifar_dir,
                                             const std::string& output_dir,
                                             const Cifar10TFRecordOptions& options) {
  // Checked before the minutes of reading and encoding, so a typo fails at once.
  tfrecord_compression_from_name(options.compression());
  for (int shards : {options.train_shards(), options.validation_shards()}) {
    if (shards < 1) {
      throw ValueError("write_cifar10_tfrecords: the number of shards must be >= 1, got " +
                       std::to_string(shards));
    }
  }
  const auto [train, test] = cifar10::load_data(cifar_dir);
  make_output_dir(output_dir);
  const fs::path out(output_dir);
  const fs::path png = options.png_dir();
  Cifar10TFRecordFiles files;
  files.train = write_split(train.first, train.second, (out / "train").string(),
                            options.train_shards(), options.compression(),
                            png.empty() ? png : png / "train", cifar10::class_names());
  files.validation = write_split(test.first, test.second, (out / "validation").string(),
                                 options.validation_shards(), options.compression(),
                                 png.empty() ? png : png / "validation", cifar10::class_names());
  files.train_images = train.first.dim(0);
  files.validation_images = test.first.dim(0);
  return files;
}

}  // namespace strata::data
