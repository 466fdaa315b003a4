// keras.datasets.mnist: MNIST handwritten digits (LeCun et al.).
// Files (plain or .gz IDX): train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte. Fetch with: scripts/get_datasets mnist
#pragma once

#include <string>
#include <utility>

#include "framework/core/tensor.h"

namespace strata::mnist {

// ((x_train, y_train), (x_test, y_test)) like Keras: x uint8 [60000,28,28] / [10000,28,28],
// y uint8 [60000] / [10000] in 0..9. `dir` overrides the lookup in datasets/data_dir.h.
// Throws IOError when the files are missing, ValueError when they are malformed.
std::pair<std::pair<Tensor, Tensor>, std::pair<Tensor, Tensor>> load_data(
    const std::string& dir = "");

}  // namespace strata::mnist
