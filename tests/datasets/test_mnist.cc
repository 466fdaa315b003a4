// mnist / fashion_mnist load_data on small files in the real layout (plain and .gz IDX), the
// checks on their contents, and the lookup rule's error when nothing is installed.
#include <filesystem>

#include "datasets/fashion_mnist.h"
#include "datasets/idx.h"
#include "framework/core/error.h"
#include "datasets/mnist.h"
#include "datasets/temp_dir.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;
using testing::ScopedEnv;
using testing::TempDir;

// Writes the four MNIST files with n_train / n_test tiny 28x28 images; labels are i % 10.
void write_mnist(const std::filesystem::path& dir, int64_t n_train, int64_t n_test, bool gzip) {
  std::filesystem::create_directories(dir);
  const std::string ext = gzip ? ".gz" : "";
  auto images = [](int64_t n, int offset) {
    std::vector<uint8_t> v(size_t(n * 28 * 28));
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t((i + size_t(offset)) % 251);
    return Tensor::from_vector(v, {n, 28, 28});
  };
  auto labels = [](int64_t n) {
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(i % 10);
    return Tensor::from_vector(v);
  };
  data::write_idx((dir / ("train-images-idx3-ubyte" + ext)).string(), images(n_train, 0), gzip);
  data::write_idx((dir / ("train-labels-idx1-ubyte" + ext)).string(), labels(n_train), gzip);
  data::write_idx((dir / ("t10k-images-idx3-ubyte" + ext)).string(), images(n_test, 7), gzip);
  data::write_idx((dir / ("t10k-labels-idx1-ubyte" + ext)).string(), labels(n_test), gzip);
}

TEST(Mnist, LoadsPlainFilesFromAnExplicitDirectory) {
  TempDir dir;
  write_mnist(dir.path(), 12, 5, false);
  auto [train, test] = mnist::load_data(dir.path().string());
  EXPECT_EQ(train.first.shape(), (Shape{12, 28, 28}));
  EXPECT_EQ(train.first.dtype(), uint8);
  EXPECT_EQ(train.second.shape(), (Shape{12}));
  EXPECT_EQ(train.second.dtype(), uint8);
  EXPECT_EQ(test.first.shape(), (Shape{5, 28, 28}));
  EXPECT_EQ(test.second.to_vector<int>(), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(test.first.to_vector<int>()[0], 7);
}

TEST(FashionMnist, LoadsGzipFilesFromStrataDataDir) {
  TempDir dir;
  write_mnist(dir.path() / "fashion_mnist", 10, 3, true);
  ScopedEnv env("STRATA_DATA_DIR", dir.path().string());
  auto [train, test] = fashion_mnist::load_data();
  EXPECT_EQ(train.first.shape(), (Shape{10, 28, 28}));
  EXPECT_EQ(test.second.shape(), (Shape{3}));
  EXPECT_EQ(train.second.to_vector<int>()[9], 9);
}

TEST(Mnist, FallsBackToHomeDirectory) {
  TempDir dir;
  write_mnist(dir.path() / ".strata" / "datasets" / "mnist", 2, 2, true);
  ScopedEnv home("HOME", dir.path().string());
  ScopedEnv data_dir("STRATA_DATA_DIR", (dir.path() / "empty").string());
  EXPECT_EQ(mnist::load_data().first.first.dim(0), 2);
}

TEST(Mnist, MissingEverywhereNamesEveryPlaceAndTheFetchCommand) {
  TempDir dir;
  ScopedEnv home("HOME", (dir.path() / "home").string());
  ScopedEnv data_dir("STRATA_DATA_DIR", (dir.path() / "data").string());
  const std::string env_place = (dir.path() / "data" / "mnist").string();
  const std::string home_place = (dir.path() / "home" / ".strata" / "datasets" / "mnist").string();
  expect_error<IOError>([] { mnist::load_data(); },
                        {"mnist: data set not found", env_place, home_place,
                         "train-images-idx3-ubyte or train-images-idx3-ubyte.gz",
                         "scripts/get_datasets mnist"});
  // An explicit directory is the only place looked, and a partial install says what's missing.
  write_mnist(dir.path() / "partial", 2, 2, false);
  std::filesystem::remove(dir.path() / "partial" / "t10k-labels-idx1-ubyte");
  const std::string partial = (dir.path() / "partial").string();
  expect_error<IOError>([&] { fashion_mnist::load_data(partial); },
                        {partial, "lacks t10k-labels-idx1-ubyte", "scripts/get_datasets fashion_mnist"});
}

TEST(Mnist, MismatchedImageAndLabelCounts) {
  TempDir dir;
  write_mnist(dir.path(), 6, 2, false);
  const std::string labels = dir.file("train-labels-idx1-ubyte");
  data::write_idx(labels, zeros({5}, uint8));
  expect_error<ValueError>([&] { mnist::load_data(dir.path().string()); },
                           {"image/label count mismatch", "holds 6 images", labels, "5 labels"});
}

TEST(Mnist, LabelOutOfRange) {
  TempDir dir;
  write_mnist(dir.path(), 4, 2, true);
  const std::string labels = dir.file("t10k-labels-idx1-ubyte.gz");
  data::write_idx(labels, tensor<uint8_t>({3, 12}, {2}), true);
  expect_error<ValueError>([&] { mnist::load_data(dir.path().string()); },
                           {labels, "label 12 at index 1", "expected 0..9"});
}

TEST(Mnist, WrongShapeOrType) {
  TempDir dir;
  write_mnist(dir.path(), 4, 2, false);
  const std::string images = dir.file("train-images-idx3-ubyte");
  data::write_idx(images, zeros({4, 784}, float32));
  expect_error<ValueError>([&] { mnist::load_data(dir.path().string()); },
                           {images, "expected uint8 images", "float32 [4,784]"});
}

}  // namespace
}  // namespace strata
