#include "datasets/fashion_mnist.h"

#include "datasets/idx_dataset.h"

namespace strata::fashion_mnist {

std::pair<std::pair<Tensor, Tensor>, std::pair<Tensor, Tensor>> load_data(const std::string& dir) {
  return data::internal::load_mnist_layout("fashion_mnist", dir);
}

}  // namespace strata::fashion_mnist
