// The CIFAR-10 binary batch reader: read_cifar_batch on the input as a file.
#include <cstdint>
#include <string>

#include "datasets/cifar10.h"
#include "framework/core/error.h"
#include "fuzz/fuzz_support.h"

namespace strata::fuzz {

// Batches of one and two records (a record: one label byte, then 32x32 R, G and B planes).
void write_seeds(const std::string& dir) {
  std::string batch;
  for (int r = 0; r < 2; ++r) {
    std::string record(cifar10::kRecordBytes, '\0');
    record[0] = char(r == 0 ? 3 : 9);
    for (size_t i = 1; i < record.size(); ++i) record[i] = char((i * 7 + size_t(r)) % 256);
    batch += record;
    write_seed(dir, "batch_" + std::to_string(r + 1) + ".bin", batch);
  }
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = strata::fuzz::scratch_file(data, size);
  try {
    const auto [x, y] = strata::cifar10::read_cifar_batch(path);
    (void)x.numel();
    (void)y.numel();
  } catch (const strata::Error&) {
  }
  return 0;
}
