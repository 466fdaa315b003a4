// keras.datasets.cifar10 from the CIFAR-10 binary version: cifar-10-batches-bin/ holding
// data_batch_1..5.bin and test_batch.bin (10000 records each; a record is 1 label byte then
// 1024 R, 1024 G, 1024 B bytes of a 32x32 image, row-major) and batches.meta.txt (class names).
// Fetch with: scripts/get_datasets cifar10
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "framework/core/tensor.h"

namespace strata::cifar10 {

inline constexpr int kImageSize = 32;
inline constexpr int kRecordBytes = 1 + 3 * kImageSize * kImageSize;  // 3073
inline constexpr int kNumClasses = 10;

// ((x_train, y_train), (x_test, y_test)) exactly like Keras: x uint8 NHWC [50000,32,32,3] /
// [10000,32,32,3], y uint8 [50000,1] / [10000,1]. `dir` may be the folder holding
// cifar-10-batches-bin/ or that folder itself; empty = the lookup in datasets/data_dir.h.
std::pair<std::pair<Tensor, Tensor>, std::pair<Tensor, Tensor>> load_data(
    const std::string& dir = "");

// One binary batch file of any number of records: (x uint8 [N,32,32,3], y uint8 [N,1]).
// ValueError when the size is not a multiple of 3073 or a label exceeds 9 (the size is checked
// before anything is allocated); ResourceExhaustedError, naming the size, when the records do
// not fit in memory.
std::pair<Tensor, Tensor> read_cifar_batch(const std::string& path);

// "airplane", "automobile", ..., "truck": the class names, in label order.
const std::vector<std::string>& class_names();

}  // namespace strata::cifar10
