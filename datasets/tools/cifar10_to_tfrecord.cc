// strata_cifar10_to_tfrecord --output_dir DIR [--data_dir CIFAR] [--train_shards 10]
//     [--validation_shards 2] [--compression ""|GZIP|ZLIB] [--png_dir DIR]
//
// Converts CIFAR-10 (binary version, read by cifar10::load_data) to TFRecord files of
// tf.train.Example in TensorFlow Model Garden's layout: DIR/train-0000k-of-00010.tfrecord (the
// 50,000 training images) and DIR/validation-0000k-of-00002.tfrecord (the 10,000 test images),
// each record a PNG with its label (datasets/tfrecord/cifar10_tfrecord.h has the features).
// --png_dir also writes the images as PNG folders, PNG_DIR/{train,validation}/<class>/<n>.png,
// for torchvision's ImageFolder. Plain argv, like the other data-set tools (the library and
// its tools never link Abseil); --name value and --name=value both work.
#include <iostream>
#include <string>

#include "datasets/tfrecord/cifar10_tfrecord.h"

namespace {

int usage(std::ostream& out, int code) {
  out << "usage: strata_cifar10_to_tfrecord --output_dir DIR [--data_dir CIFAR10_DIR]\n"
         "           [--train_shards N (10)] [--validation_shards N (2)]\n"
         "           [--compression \"\"|GZIP|ZLIB] [--png_dir DIR]\n"
         "  --data_dir: the folder holding cifar-10-batches-bin/ (default: $STRATA_DATA_DIR/"
         "cifar10, then ~/.strata/datasets/cifar10; fetch with scripts/get_datasets cifar10)\n";
  return code;
}

// A whole decimal number from 1 to 99999 (the shard names have 5 digits), or -1.
int parse_shards(const std::string& text) {
  if (text.empty() || text.size() > 5) return -1;
  if (text.find_first_not_of("0123456789") != std::string::npos) return -1;
  const int n = std::stoi(text);
  return n >= 1 ? n : -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir, output_dir;
  strata::data::Cifar10TFRecordOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i], value;
    if (name == "--help" || name == "-h") return usage(std::cout, 0);
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::cerr << "strata_cifar10_to_tfrecord: " << name << " needs a value\n";
      return usage(std::cerr, 2);
    }
    if (name == "--data_dir") {
      data_dir = value;
    } else if (name == "--output_dir") {
      output_dir = value;
    } else if (name == "--compression") {
      options.compression(value);
    } else if (name == "--png_dir") {
      options.png_dir(value);
    } else if (name == "--train_shards" || name == "--validation_shards") {
      const int n = parse_shards(value);
      if (n < 0) {
        std::cerr << "strata_cifar10_to_tfrecord: " << name << " expects a whole number from 1 "
                  << "to 99999, got '" << value << "'\n";
        return 2;
      }
      if (name == "--train_shards") options.train_shards(n);
      else options.validation_shards(n);
    } else {
      std::cerr << "strata_cifar10_to_tfrecord: unknown flag " << name << "\n";
      return usage(std::cerr, 2);
    }
  }
  if (output_dir.empty()) {
    std::cerr << "strata_cifar10_to_tfrecord: --output_dir is required\n";
    return usage(std::cerr, 2);
  }
  try {
    const auto files = strata::data::write_cifar10_tfrecords(data_dir, output_dir, options);
    std::cout << "strata_cifar10_to_tfrecord: wrote " << files.train_images << " training images "
              << "in " << files.train.size() << " files and " << files.validation_images
              << " validation images in " << files.validation.size() << " files to " << output_dir
              << (options.compression().empty() ? "" : " (" + options.compression() + ")")
              << (options.png_dir().empty() ? "" : ", and PNG folders to " + options.png_dir())
              << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "strata_cifar10_to_tfrecord: " << e.what() << "\n";
    return 1;
  }
}
