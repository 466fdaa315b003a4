#include "datasets/mnist.h"

#include "datasets/idx_dataset.h"

namespace strata::mnist {

std::pair<std::pair<Tensor, Tensor>, std::pair<Tensor, Tensor>> load_data(const std::string& dir) {
  return data::internal::load_mnist_layout("mnist", dir);
}

}  // namespace strata::mnist
