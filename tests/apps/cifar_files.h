// A CIFAR-10 folder in the real binary layout (cifar-10-batches-bin/: data_batch_1..5.bin and
// test_batch.bin, records of 1 label byte + 3072 pixel bytes), small enough for a test.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace strata::apps_testing
