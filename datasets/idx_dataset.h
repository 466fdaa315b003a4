// Internal: the MNIST file layout that MNIST and Fashion-MNIST share (four IDX files, plain or
// .gz), loaded and checked. Use mnist::load_data / fashion_mnist::load_data instead.
#pragma once

#include <string>
#include <utility>

#include "framework/core/tensor.h"

namespace strata::data::internal {

using XY = std::pair<Tensor, Tensor>;

// ((x_train, y_train), (x_test, y_test)) for data set `name` found by locate_dataset.
std::pair<XY, XY> load_mnist_layout(const std::string& name, const std::string& dir);

// Reads one images/labels pair and checks it: uint8 images [N,H,W], uint8 labels [N] in 0..9,
// equal counts.
XY load_mnist_split(const std::string& images_path, const std::string& labels_path);

}  // namespace strata::data::internal
