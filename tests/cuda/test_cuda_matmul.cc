// CUDA matmul (cuBLASLt) against the CPU and a float64 reference: every transpose combination,
// 2-D, batched and shared-b operands, float32 with TF32 off (tight) and on (loose), float16,
// bfloat16 and float64, unaligned views, empty and K = 0 problems, the plan cache, and
// finite-difference gradients on /gpu:0. Skipped without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/cuda_test_inputs.h"
#include "cuda/dnn_test_utils.h"
#include "framework/backend/gpu_algorithm_stats.h"

namespace strata {
namespace {

using testing::expect_gpu_in_dtype_matches_cpu;
using testing::expect_gpu_matches_cpu;
using testing::random_input;
using testing::Tf32Scope;
using testing::Tolerance;

// Shape of an operand [batch..., rows, cols], stored transposed when `t`.
Shape operand(std::vector<int64_t> batch, int64_t rows, int64_t cols, bool t) {
  batch.push_back(t ? cols : rows);
  batch.push_back(t ? rows : cols);
  return Shape(batch);
}

struct MatmulCase {
  std::string name;
  Shape a, b;
  bool ta, tb;
};

// For every transpose combination: a plain GEMM, a batch with batched b, a batch sharing b.
std::vector<MatmulCase> cases(int64_t m, int64_t k, int64_t n) {
  std::vector<MatmulCase> out;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const std::string flags = " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb);
      out.push_back({"2-D" + flags, operand({}, m, k, ta), operand({}, k, n, tb), ta, tb});
      out.push_back({"batched" + flags, operand({2, 3}, m, k, ta), operand({2, 3}, k, n, tb), ta,
                     tb});
      out.push_back({"shared b" + flags, operand({2, 3}, m, k, ta), operand({}, k, n, tb), ta,
                     tb});
    }
  }
  return out;
}

void expect_cases_match(const std::vector<MatmulCase>& all, Tolerance tol) {
  int64_t seed = 1;
  for (const MatmulCase& c : all) {
    const Tensor a = random_input(c.a, float32, seed++);
    const Tensor b = random_input(c.b, float32, seed++);
    expect_gpu_matches_cpu(
        c.name.c_str(),
        [&](const std::vector<Tensor>& in) { return matmul(in[0], in[1], c.ta, c.tb); }, {a, b},
        tol);
  }
}

// out = op(a) @ op(b) in double precision on the host.
Tensor reference_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const int ra = a.rank(), rb = b.rank();
  const int64_t m = ta ? a.dim(ra - 1) : a.dim(ra - 2), k = ta ? a.dim(ra - 2) : a.dim(ra - 1);
  const int64_t n = tb ? b.dim(rb - 2) : b.dim(rb - 1);
  const int64_t batch = a.numel() / (m * k);
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  std::vector<double> out(size_t(batch * m * n), 0.0);
  for (int64_t p = 0; p < batch; ++p) {
    const double* pa = av.data() + p * m * k;
    const double* pb = bv.data() + (rb > 2 ? p * k * n : 0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l) {
          s += (ta ? pa[l * m + i] : pa[i * k + l]) * (tb ? pb[j * k + l] : pb[l * n + j]);
        }
        out[size_t((p * m + i) * n + j)] = s;
      }
  }
  std::vector<int64_t> dims(a.shape().begin(), a.shape().end() - 2);
  dims.push_back(m);
  dims.push_back(n);
  return Tensor::from_vector(out, Shape(dims));
}

TEST(CudaMatmul, Float32WithTf32DisabledMatchesCpuTightly) {
  STRATA_REQUIRE_GPU();
  Tf32Scope exact(false);
  // Tight enough that TF32's 10-bit mantissa (errors ~1e-2 at K = 96) would fail it.
  expect_cases_match(cases(7, 5, 3), {1e-5, 1e-5});
  expect_cases_match(cases(64, 96, 80), {1e-5, 1e-4});
}

TEST(CudaMatmul, Float32WithTf32EnabledIsClose) {
  STRATA_REQUIRE_GPU();
  Tf32Scope fast(true);
  expect_cases_match(cases(64, 96, 80), {1e-2, 5e-2});
}

TEST(CudaMatmul, SixteenBitAndFloat64MatchTheFloat32Cpu) {
  STRATA_REQUIRE_GPU();
  int64_t seed = 100;
  for (DType dtype : testing::dnn_dtypes()) {
    for (const MatmulCase& c : cases(9, 32, 17)) {
      const Tensor a = random_input(c.a, float32, seed++);
      const Tensor b = random_input(c.b, float32, seed++);
      Tolerance tol = testing::tolerance_against_float32(dtype);
      if (dtype == float32 || dtype == float64) tol.atol = 1e-4;  // float32 CPU sums 32 terms
      Tf32Scope exact(false);
      expect_gpu_in_dtype_matches_cpu(
          c.name, [&](const std::vector<Tensor>& in) { return matmul(in[0], in[1], c.ta, c.tb); },
          {a, b}, dtype, tol);
    }
  }
}

TEST(CudaMatmul, Float64HasDoublePrecision) {
  STRATA_REQUIRE_GPU();
  int64_t seed = 200;
  for (const MatmulCase& c : cases(9, 40, 17)) {
    SCOPED_TRACE(c.name);
    const Tensor a = random_input(c.a, float64, seed++);
    const Tensor b = random_input(c.b, float64, seed++);
    const Tensor y = matmul(a.to(Device::gpu(0)), b.to(Device::gpu(0)), c.ta, c.tb);
    const testing::Tolerance tol = testing::tolerance_for(float64);
    testing::expect_all_close(y.to(Device::cpu()), reference_matmul(a, b, c.ta, c.tb), tol.rtol,
                              tol.atol);
  }
}

// Views that start inside their storage are less aligned than fresh allocations: the plan must
// not assume 256-byte alignment.
TEST(CudaMatmul, UnalignedViews) {
  STRATA_REQUIRE_GPU();
  Tf32Scope exact(false);
  for (DType dtype : {float32, float16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor a_full = random_input({10, 24}, dtype, 300).to(Device::gpu(0));
    const Tensor b_full = random_input({25, 12}, dtype, 301).to(Device::gpu(0));
    const Tensor a = a_full.slice(1, 10);  // starts 24 elements in
    const Tensor b = b_full.slice(1, 25);  // starts 12 elements in
    const Tensor out_full = Tensor::empty({10, 12}, dtype, Device::gpu(0));
    Tensor out = out_full.slice(1, 10);
    backend_for(a).matmul(a, b, false, false, out);
    const Tensor expected =
        matmul(a.to(Device::cpu()).cast(float32), b.to(Device::cpu()).cast(float32));
    const Tolerance tol = testing::tolerance_against_float32(dtype);
    testing::expect_all_close(out.to(Device::cpu()).cast(float32), expected, tol.rtol,
                              dtype == float32 ? 1e-4 : tol.atol);
  }
}

TEST(CudaMatmul, EmptyProblemsAndZeroInnerDimension) {
  STRATA_REQUIRE_GPU();
  const Device gpu = Device::gpu(0);
  // K = 0: the sum of nothing, zeros.
  const Tensor y = matmul(zeros({3, 0}).to(gpu), zeros({0, 4}).to(gpu));
  EXPECT_EQ(y.device(), gpu);
  EXPECT_EQ(y.shape(), Shape({3, 4}));
  testing::expect_all_close(y.to(Device::cpu()), zeros({3, 4}), 0.0, 0.0);
  // No rows: an empty result, and nothing for cuBLASLt to do.
  const Tensor e = matmul(random_input({2, 0, 5}, float32, 1).to(gpu),
                          random_input({5, 6}, float32, 2).to(gpu));
  EXPECT_EQ(e.shape(), Shape({2, 0, 6}));
}

TEST(CudaMatmul, SecondCallReusesTheCachedAlgorithm) {
  STRATA_REQUIRE_GPU();
  // A shape no other test uses, so the first call must search.
  const Tensor a = random_input({13, 29}, float32, 400).to(Device::gpu(0));
  const Tensor b = random_input({29, 31}, float32, 401).to(Device::gpu(0));
  const int64_t before = gpu::algorithm_search_counts().matmul;
  const Tensor first = matmul(a, b);
  const int64_t after_first = gpu::algorithm_search_counts().matmul;
  const Tensor second = matmul(a, b);
  EXPECT_EQ(after_first - before, 1);
  EXPECT_EQ(gpu::algorithm_search_counts().matmul, after_first);
  testing::expect_all_close(second.to(Device::cpu()), first.to(Device::cpu()), 1e-6, 1e-6);
}

TEST(CudaMatmul, Gradients) {
  STRATA_REQUIRE_GPU();
  Tf32Scope exact(false);  // finite differences need full float32 precision
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  const Device gpu = Device::gpu(0);
  int64_t seed = 500;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const std::string name = "matmul ta=" + std::to_string(ta) + " tb=" + std::to_string(tb);
      auto f = [ta, tb](const std::vector<Tensor>& in) { return matmul(in[0], in[1], ta, tb); };
      testing::expect_gradients_match(
          name.c_str(), f,
          {random_input(operand({}, 3, 4, ta), float32, seed++).to(gpu),
           random_input(operand({}, 4, 2, tb), float32, seed++).to(gpu)},
          opts);
      testing::expect_gradients_match(
          (name + " batched").c_str(), f,
          {random_input(operand({2}, 3, 4, ta), float32, seed++).to(gpu),
           random_input(operand({2}, 4, 2, tb), float32, seed++).to(gpu)},
          opts);
      testing::expect_gradients_match(
          (name + " shared b").c_str(), f,
          {random_input(operand({2, 2}, 3, 4, ta), float32, seed++).to(gpu),
           random_input(operand({}, 4, 2, tb), float32, seed++).to(gpu)},
          opts);
    }
  }
}

}  // namespace
}  // namespace strata
