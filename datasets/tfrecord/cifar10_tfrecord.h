// Images and labels as sharded TFRecord files of tf.train.Example, in TensorFlow Model Garden's
// layout (official/vision/data: tfrecord_lib.write_tf_record_dataset and
// TfExampleBuilder.add_encoded_image_feature), and CIFAR-10 converted that way.
//
//   data::write_cifar10_tfrecords("", "/data/cifar10-tfrecord",
//                                 data::Cifar10TFRecordOptions().compression("GZIP"));
//   // -> train-00000-of-00010.tfrecord ... train-00009-of-00010.tfrecord (50,000 images),
//   //    validation-00000-of-00002.tfrecord, validation-00001-of-00002.tfrecord (10,000)
//
// Each record is one image, round-robin over the shards (image i in shard i % shards, as
// tfrecord_lib does), with the features of Model Garden's EncodedImageFeatureKey:
//   image/encoded     bytes   the PNG (encode_png)
//   image/format      bytes   "PNG" (Model Garden's canonical, upper-case name)
//   image/height      int64   H
//   image/width       int64   W
//   image/channels    int64   C
//   image/source_id   bytes   the image's index in its split, in decimal ("0", "1", ...; Model
//                             Garden reads source ids as numbers)
//   image/class/label int64   the label
// which Model Garden's classification input (image_field_key "image/encoded", label_field_key
// "image/class/label") reads as they are.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "framework/core/tensor.h"

namespace strata::data {

// images: uint8 [N,H,W,C] (C = 1..4); labels: any integer dtype, [N] or [N,1]. Writes
// `<path_prefix>-00000-of-0000S.tfrecord` ... (S = num_shards >= 1; compression "", "GZIP" or
// "ZLIB", of each whole file; the names stay the same) and returns their paths in shard order.
// ShapeError / DTypeError for images or labels of another shape or dtype, ValueError for
// num_shards < 1 or an unknown compression, IOError when a file cannot be written.
std::vector<std::string> write_image_classification_tfrecords(const Tensor& images,
                                                              const Tensor& labels,
                                                              const std::string& path_prefix,
                                                              int num_shards,
                                                              const std::string& compression = "");

// The same images as a folder tree for torchvision's ImageFolder and Keras'
// image_dataset_from_directory: <dir>/<class_names[label]>/<index, 5 digits>.png. With class
// names sorted as CIFAR-10's are, both assign each folder its label. ValueError for a label
// without a name.
void write_image_folder(const Tensor& images, const Tensor& labels, const std::string& dir,
                        const std::vector<std::string>& class_names);

class Cifar10TFRecordOptions {
 public:
  Cifar10TFRecordOptions& train_shards(int n) { train_shards_ = n; return *this; }
  Cifar10TFRecordOptions& validation_shards(int n) { validation_shards_ = n; return *this; }
  // "", "GZIP" or "ZLIB" (tf.io.TFRecordOptions' compression_type).
  Cifar10TFRecordOptions& compression(std::string c) { compression_ = std::move(c); return *this; }
  // Non-empty: also write the images as PNG folders, <dir>/train/<class>/<index>.png and
  // <dir>/validation/<class>/<index>.png (class names: cifar10::class_names()).
  Cifar10TFRecordOptions& png_dir(std::string dir) { png_dir_ = std::move(dir); return *this; }

  int train_shards() const { return train_shards_; }
  int validation_shards() const { return validation_shards_; }
  const std::string& compression() const { return compression_; }
  const std::string& png_dir() const { return png_dir_; }

 private:
  int train_shards_ = 10;
  int validation_shards_ = 2;
  std::string compression_;
  std::string png_dir_;
};

struct Cifar10TFRecordFiles {
  std::vector<std::string> train, validation;  // in shard order
  int64_t train_images = 0, validation_images = 0;
};

// Reads CIFAR-10 with cifar10::load_data(cifar_dir) ("" = its usual lookup) and writes its
// 50,000 training images as output_dir/train-*-of-*.tfrecord and its 10,000 test images as
// output_dir/validation-*-of-*.tfrecord (the split names of Model Garden's ImageNet files),
// creating output_dir. Errors as load_data's and write_image_classification_tfrecords'.
Cifar10TFRecordFiles write_cifar10_tfrecords(const std::string& cifar_dir,
                                             const std::string& output_dir,
                                             const Cifar10TFRecordOptions& options = {});

}  // namespace strata::data
