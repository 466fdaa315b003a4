// A CIFAR-10 folder in the real binary layout (cifar-10-batches-bin/: data_batch_1..5.bin and
// test_batch.bin, records of 1 label byte + 3072 pixel bytes), small enough for a test.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <strata/strata.h>

namespace strata::apps_testing {

inline void write_cifar_batch(const std::filesystem::path& path, int records) {
  std::ofstream out(path, std::ios::binary);
  for (int r = 0; r < records; ++r) {
    out.put(char(r % 10));
    for (int i = 0; i < 3072; ++i) out.put(char((r * 31 + i * 7) % 256));
  }
}

// `per_train_batch` images in each of the 5 training files, `test` in test_batch.bin.
inline std::string write_cifar_dir(const std::filesystem::path& root, int per_train_batch, int test) {
  const std::filesystem::path dir = root / "cifar-10-batches-bin";
  std::filesystem::create_directories(dir);
  for (int i = 1; i <= 5; ++i) {
    write_cifar_batch(dir / ("data_batch_" + std::to_string(i) + ".bin"), per_train_batch);
  }
  write_cifar_batch(dir / "test_batch.bin", test);
  return root.string();
}

// The same images as TFRecord files of tf.train.Example (image/encoded PNG, image/class/label),
// as strata_cifar10_to_tfrecord writes them: `train_files` files train-0000i-of-0000n of
// `per_file` images each, and validation-00000-of-00001 with `validation` images.
inline std::string write_cifar_records(const std::filesystem::path& root, int train_files,
                                       int per_file, int validation) {
  std::filesystem::create_directories(root);
  auto write = [](const std::filesystem::path& path, int records, int first) {
    TFRecordWriter w(path.string());
    for (int r = first; r < first + records; ++r) {
      std::vector<uint8_t> pixels(3072);
      for (int i = 0; i < 3072; ++i) pixels[size_t(i)] = uint8_t((r * 31 + i * 7) % 256);
      const Tensor image = Tensor::from_vector(pixels, {32, 32, 3});
      w.write(data::ExampleBuilder()
                  .add_bytes("image/encoded", data::record_bytes(data::encode_png(image)))
                  .add_int64("image/class/label", {int64_t(r % 10)})
                  .serialize());
    }
  };
  const std::string n = std::to_string(train_files);
  for (int f = 0; f < train_files; ++f) {
    write(root / ("train-0000" + std::to_string(f) + "-of-0000" + n + ".tfrecord"), per_file,
          f * per_file);
  }
  write(root / "validation-00000-of-00001.tfrecord", validation, 0);
  return root.string();
}

}  // namespace strata::apps_testing
