#include "datasets/idx_dataset.h"

#include "datasets/data_dir.h"
#include "datasets/idx.h"

namespace strata::data::internal {
namespace {

constexpr int kNumClasses = 10;

FileAlternatives idx_file(const std::string& stem) { return {stem, stem + ".gz"}; }

}  // namespace

XY load_mnist_split(const std::string& images_path, const std::string& labels_path) {
  Tensor x = read_idx(images_path);
  Tensor y = read_idx(labels_path);
  if (x.dtype() != uint8 || x.rank() != 3) {
    throw ValueError(images_path + ": expected uint8 images of shape [N,H,W] (MNIST: [N,28,28]), found " +
                     dtype_name(x.dtype()) + " " + x.shape().to_string());
  }
  if (y.dtype() != uint8 || y.rank() != 1) {
    throw ValueError(labels_path + ": expected uint8 labels of shape [N], found " +
                     dtype_name(y.dtype()) + " " + y.shape().to_string());
  }
  if (x.dim(0) != y.dim(0)) {
    throw ValueError("image/label count mismatch: " + images_path + " holds " +
                     std::to_string(x.dim(0)) + " images but " + labels_path + " holds " +
                     std::to_string(y.dim(0)) + " labels");
  }
  const uint8_t* labels = y.data<uint8_t>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (labels[i] >= kNumClasses) {
      throw ValueError(labels_path + ": label " + std::to_string(labels[i]) + " at index " +
                       std::to_string(i) + " is out of range (expected 0..9)");
    }
  }
  return {x, y};
}

std::pair<XY, XY> load_mnist_layout(const std::string& name, const std::string& dir) {
  const std::vector<FileAlternatives> files = {
      idx_file("train-images-idx3-ubyte"), idx_file("train-labels-idx1-ubyte"),
      idx_file("t10k-images-idx3-ubyte"), idx_file("t10k-labels-idx1-ubyte")};
  const std::string found = locate_dataset(name, dir, files);
  auto path = [&](size_t i) { return find_file(found, files[i]); };
  return {load_mnist_split(path(0), path(1)), load_mnist_split(path(2), path(3))};
}

}  // namespace strata::data::internal
