// The IDX reader (MNIST, Fashion-MNIST), plain and gzip: read_idx on the input as a file.
#include <cstdint>
#include <filesystem>

#include "datasets/idx.h"
#include "framework/core/error.h"
#include "framework/ops/creation.h"
#include "fuzz/fuzz_support.h"

namespace strata::fuzz {

// Every element type, plain and gzip, at the ranks MNIST uses (1 and 3) and a few others.
void write_seeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const struct {
    const char* name;
    Tensor t;
    data::IdxType type;
  } seeds[] = {
      {"labels_u8", Tensor::from_vector(std::vector<uint8_t>{5, 0, 4, 1, 9}), data::IdxType::kUInt8},
      {"images_u8", arange(0, 2 * 4 * 4, 1, int32).cast(uint8).reshape({2, 4, 4}),
       data::IdxType::kUInt8},
      {"i8", Tensor::from_vector(std::vector<int32_t>{-128, -1, 0, 127}).reshape({2, 2}),
       data::IdxType::kInt8},
      {"i16", Tensor::from_vector(std::vector<int32_t>{-32768, 7, 32767}), data::IdxType::kInt16},
      {"i32", Tensor::from_vector(std::vector<int32_t>{-70000, 0, 70000, 1}).reshape({1, 2, 2}),
       data::IdxType::kInt32},
      {"f32", Tensor::from_vector(std::vector<float>{-1.5f, 0.f, 3.25f}), data::IdxType::kFloat32},
      {"f64", Tensor::from_vector(std::vector<double>{1e-300, 2.0}).reshape({2, 1}),
       data::IdxType::kFloat64},
      {"empty", Tensor::empty({0, 3}, uint8), data::IdxType::kUInt8},
  };
  for (const auto& s : seeds) {
    const std::string base = (std::filesystem::path(dir) / s.name).string();
    data::write_idx(base + ".idx", s.t, false, s.type);
    data::write_idx(base + ".idx.gz", s.t, true, s.type);
  }
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = strata::fuzz::scratch_file(data, size);
  try {
    const strata::Tensor t = strata::data::read_idx(path);
    (void)t.numel();
  } catch (const strata::Error&) {
  }
  return 0;
}
