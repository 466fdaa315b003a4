// CUDA data movement against the CPU: transpose (every permutation of a rank-4 tensor, the tiled
// and merged-axes paths), concat, slice, slice_assign, pad, gather, scatter_add, scatter_update
// and one_hot, in dtypes of every element width, with large and empty tensors, and finite-difference gradients
// on /gpu:0. scatter_add and slice_assign are called directly on the backend (they write into an
// existing tensor). Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/cuda_test_inputs.h"
#include "cuda/gpu_test_utils.h"
#include "framework/backend/backend.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;
using testing::expect_gpu_matches_cpu;
using testing::expect_gradients_match;
using testing::random_indices;
using testing::random_input;
using testing::tolerance_for;

// Copies must be exact.
constexpr testing::Tolerance kExact{0.0, 0.0};

// One dtype of each element width, plus bool.
const std::vector<DType> kCopyDtypes = {uint8, bool_, float16, bfloat16, float32, int32, float64,
                                        int64};

// Inputs of `dtype` (non-negative for uint8).
Tensor input(const Shape& shape, DType dtype, int64_t seed) {
  return dtype == uint8 ? random_input(shape, dtype, seed, 0.0, 250.0)
                        : random_input(shape, dtype, seed, -100.0, 100.0);
}

std::string what(const char* op, DType dtype, const std::string& detail) {
  return std::string(op) + " " + dtype_name(dtype) + " " + detail;
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += std::to_string(x) + ",";
  return s;
}

void expect_transpose_matches(const Tensor& x, const std::vector<int>& perm) {
  expect_gpu_matches_cpu(
      what("transpose", x.dtype(), x.shape().to_string() + " perm " + join(perm)).c_str(),
      [&](const std::vector<Tensor>& in) { return transpose(in[0], perm); }, {x}, kExact);
}

TEST(CudaTranspose, EveryPermutationOfARank4TensorInEveryElementWidth) {
  STRATA_REQUIRE_GPU();
  for (DType dtype : kCopyDtypes) {
    const Tensor x = input({2, 3, 4, 5}, dtype, 1);
    std::vector<int> perm = {0, 1, 2, 3};
    do {
      expect_transpose_matches(x, perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(CudaTranspose, TiledMergedAndDegenerateShapes) {
  STRATA_REQUIRE_GPU();
  const std::vector<std::pair<Shape, std::vector<int>>> cases = {
      {{3, 257, 513}, {0, 2, 1}},        // batched tiles with ragged edges
      {{1000, 33}, {1, 0}},              // a matrix
      {{8, 16, 16, 24}, {0, 3, 1, 2}},   // NHWC -> NCHW: merges to [8, 256, 24] swapped
      {{8, 24, 16, 16}, {0, 2, 3, 1}},   // NCHW -> NHWC
      {{64, 3, 40}, {2, 0, 1}},          // merges to a plain matrix transpose
      {{5000, 3}, {1, 0}},               // too narrow for tiles
      {{1, 5, 1, 7}, {3, 2, 1, 0}},      // size-1 axes dropped
      {{4, 6, 5}, {1, 0, 2}},            // outer swap, contiguous inner rows
      {{2, 3, 2, 3, 2}, {4, 3, 2, 1, 0}},
      {{10}, {0}},
      {{0, 3}, {1, 0}},
      {{}, {}},
  };
  for (const auto& [shape, perm] : cases) {
    for (DType dtype : {float32, float16, float64, uint8}) expect_transpose_matches(input(shape, dtype, 2), perm);
  }
}

TEST(CudaTranspose, TooManyUnmergeableAxesThrowDeviceError) {
  STRATA_REQUIRE_GPU();
  const Tensor x = input(Shape(std::vector<int64_t>(9, 2)), float32, 3).to(Device::gpu(0));
  expect_error<DeviceError>([&] { transpose(x); }, {"transpose", "dimensions"});
}

TEST(CudaConcat, EveryAxisEveryElementWidthWithEmptyParts) {
  STRATA_REQUIRE_GPU();
  for (DType dtype : kCopyDtypes) {
    for (int axis = 0; axis < 3; ++axis) {
      std::vector<Tensor> parts;
      for (int64_t size : {2, 0, 5}) {
        std::vector<int64_t> dims = {3, 4, 6};
        dims[size_t(axis)] = size;
        parts.push_back(input(Shape(dims), dtype, 10 + size));
      }
      expect_gpu_matches_cpu(what("concat", dtype, "axis " + std::to_string(axis)).c_str(),
                             [axis](const std::vector<Tensor>& in) { return concat(in, axis); },
                             parts, kExact);
    }
  }
  // Large: columns (a kernel per part) and rows (a copy per part).
  const std::vector<Tensor> big = {input({2000, 3000}, float32, 4), input({2000, 1000}, float32, 5)};
  expect_gpu_matches_cpu("concat large axis 1",
                         [](const std::vector<Tensor>& in) { return concat(in, 1); }, big, kExact);
  const std::vector<Tensor> tall = {input({3000, 2000}, float16, 6), input({1000, 2000}, float16, 7)};
  expect_gpu_matches_cpu("concat large axis 0",
                         [](const std::vector<Tensor>& in) { return concat(in, 0); }, tall, kExact);
  expect_gpu_matches_cpu("stack",
                         [](const std::vector<Tensor>& in) { return stack(in, 1); },
                         {input({4, 5}, int64, 8), input({4, 5}, int64, 9)}, kExact);
}

TEST(CudaSlice, BoxesOfARank4TensorAndSliceAssign) {
  STRATA_REQUIRE_GPU();
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> boxes = {
      {{0, 0, 0, 0}, {6, 7, 8, 9}},   // everything: one copy
      {{2, 0, 0, 0}, {3, 7, 8, 9}},   // whole rows of axis 0: one copy
      {{1, 2, 3, 4}, {2, 3, 4, 5}},   // interior box
      {{5, 6, 7, 8}, {1, 1, 1, 1}},   // one element
      {{0, 1, 0, 0}, {6, 5, 8, 9}},   // inner axes whole: merged
      {{0, 0, 0, 3}, {6, 7, 8, 2}},   // last axis cut
      {{3, 0, 2, 0}, {2, 7, 0, 9}},   // empty
  };
  for (DType dtype : kCopyDtypes) {
    const Tensor x = input({6, 7, 8, 9}, dtype, 20);
    for (const auto& b : boxes) {
      // Named references, not structured bindings: clang 14 (the sanitizer build's compiler)
      // cannot capture those in a lambda.
      const auto& begin = b.first;
      const auto& size = b.second;
      const std::string detail = "begin " + std::to_string(begin[0]) + std::to_string(begin[1]) +
                                 std::to_string(begin[2]) + std::to_string(begin[3]);
      expect_gpu_matches_cpu(
          what("slice", dtype, detail).c_str(),
          [&](const std::vector<Tensor>& in) { return slice(in[0], begin, size); }, {x}, kExact);
      // slice_assign writes a box into a copy of x, leaving the rest untouched.
      const Tensor box = input(Shape(size), dtype, 21);
      expect_gpu_matches_cpu(
          what("slice_assign", dtype, detail).c_str(),
          [&](const std::vector<Tensor>& in) {
            Tensor out = in[0].clone();
            backend_for(out).slice_assign(in[1], begin, out);
            return out;
          },
          {x, box}, kExact);
    }
  }
  const Tensor big = input({512, 1024}, float32, 22);
  expect_gpu_matches_cpu(
      "slice large",
      [](const std::vector<Tensor>& in) { return slice(in[0], {10, 100}, {500, 900}); }, {big},
      kExact);
}

TEST(CudaPad, PaddingsValuesAndDtypes) {
  STRATA_REQUIRE_GPU();
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> paddings = {
      {{0, 0}, {0, 0}, {0, 0}},
      {{1, 2}, {0, 0}, {3, 0}},
      {{0, 0}, {2, 2}, {0, 0}},
      {{0, 0}, {0, 0}, {0, 5}},
      {{4, 0}, {1, 1}, {1, 1}},
  };
  const std::vector<std::pair<DType, double>> dtype_values = {
      {float32, 0.0}, {float32, 2.5}, {float64, -1.25}, {float16, 3.0}, {bfloat16, -7.0},
      {int32, 7.0},   {int64, -9.0},  {uint8, 255.0},   {bool_, 1.0}};
  for (const auto& [dtype, value] : dtype_values) {
    const Tensor x = input({3, 4, 5}, dtype, 30);
    for (size_t i = 0; i < paddings.size(); ++i) {
      const auto& p = paddings[i];
      const double v = value;
      expect_gpu_matches_cpu(what("pad", dtype, "case " + std::to_string(i)).c_str(),
                             [&p, v](const std::vector<Tensor>& in) { return pad(in[0], p, v); },
                             {x}, kExact);
    }
  }
  // The convolution pattern: spatial padding of NHWC.
  const Tensor nhwc = input({16, 32, 32, 16}, float32, 31);
  expect_gpu_matches_cpu(
      "pad NHWC spatially",
      [](const std::vector<Tensor>& in) { return pad(in[0], {{0, 0}, {1, 1}, {2, 1}, {0, 0}}); },
      {nhwc}, kExact);
  expect_gpu_matches_cpu(
      "pad an empty tensor",
      [](const std::vector<Tensor>& in) { return pad(in[0], {{1, 1}, {1, 1}}, 4.0); },
      {Tensor::empty({0, 3}, float32)}, kExact);
  expect_gpu_matches_cpu(
      "pad a scalar", [](const std::vector<Tensor>& in) { return pad(in[0], {}, 4.0); },
      {Tensor::scalar(2.5f)}, kExact);
}

TEST(CudaGather, AlongEveryAxisWithEveryIndexDtype) {
  STRATA_REQUIRE_GPU();
  for (DType dtype : kCopyDtypes) {
    const Tensor params = input({5, 6, 7}, dtype, 40);
    for (int axis = 0; axis < 3; ++axis) {
      const int64_t n = params.shape()[axis];
      for (DType index_dtype : {int32, int64}) {
        for (const Shape& index_shape : {Shape{4}, Shape{2, 3}, Shape{0}}) {
          const Tensor idx = random_indices(index_shape, n, index_dtype, 41 + axis);
          expect_gpu_matches_cpu(
              what("gather", dtype, "axis " + std::to_string(axis) + " indices " +
                                        dtype_name(index_dtype) + index_shape.to_string())
                  .c_str(),
              [axis](const std::vector<Tensor>& in) { return gather(in[0], in[1], axis); },
              {params, idx}, kExact);
        }
      }
    }
  }
  // An embedding table: Embedding's forward.
  const Tensor table = input({10000, 128}, float32, 42);
  const Tensor ids = random_indices({64, 50}, 10000, int32, 43);
  expect_gpu_matches_cpu(
      "embedding_lookup",
      [](const std::vector<Tensor>& in) { return embedding_lookup(in[0], in[1]); }, {table, ids},
      kExact);
}

// out = base with updates scatter-added at indices along axis (the kernel itself).
Tensor scatter_added(const Tensor& base, const Tensor& updates, const Tensor& indices, int axis) {
  Tensor out = base.clone();
  backend_for(out).scatter_add(updates, indices, axis, out);
  return out;
}

TEST(CudaScatterAdd, RepeatedIndicesAccumulateInEveryDtype) {
  STRATA_REQUIRE_GPU();
  const std::vector<DType> dtypes = {float32, float64, float16, bfloat16, int32, int64, uint8, bool_};
  for (DType dtype : dtypes) {
    for (int axis = 0; axis < 2; ++axis) {
      std::vector<int64_t> base_dims = {5, 6, 3}, update_dims = {5, 6, 3};
      update_dims[size_t(axis)] = 12;  // 12 updates into 5 or 6 rows: repeats
      const Tensor base = input(Shape(base_dims), dtype, 50);
      const Tensor updates = dtype == uint8 ? random_input(Shape(update_dims), dtype, 51, 0.0, 100.0)
                                            : random_input(Shape(update_dims), dtype, 51, -2.0, 2.0);
      for (DType index_dtype : {int32, int64}) {
        const Tensor idx = random_indices({12}, base_dims[size_t(axis)], index_dtype, 52);
        expect_gpu_matches_cpu(
            what("scatter_add", dtype, "axis " + std::to_string(axis) + " " + dtype_name(index_dtype)).c_str(),
            [axis](const std::vector<Tensor>& in) { return scatter_added(in[0], in[1], in[2], axis); },
            {base, updates, idx}, tolerance_for(dtype));
      }
    }
  }
  // Heavy contention: 100000 rows of updates into 10 rows.
  const Tensor base = Tensor::from_vector(std::vector<float>(10 * 64, 0.f), {10, 64});
  const Tensor updates = random_input({100000, 64}, float32, 53);
  const Tensor idx = random_indices({100000}, 10, int64, 54);
  expect_gpu_matches_cpu(
      "scatter_add contended",
      [](const std::vector<Tensor>& in) { return scatter_added(in[0], in[1], in[2], 0); },
      {base, updates, idx}, {1e-4, 1e-3});
}

// out = base with rows at (unique) indices along axis replaced by updates.
Tensor scatter_updated(const Tensor& base, const Tensor& updates, const Tensor& indices, int axis) {
  Tensor out = base.clone();
  backend_for(out).scatter_update(updates, indices, axis, out);
  return out;
}

TEST(CudaScatterUpdate, UniqueRowsAreWrittenInEveryElementWidth) {
  STRATA_REQUIRE_GPU();
  for (DType dtype : kCopyDtypes) {
    for (int axis = 0; axis < 2; ++axis) {
      std::vector<int64_t> base_dims = {7, 8, 3}, update_dims = {7, 8, 3};
      update_dims[size_t(axis)] = 4;  // rows 5, 0, 3, 1 (a sparse optimizer step's, unsorted)
      const Tensor base = input(Shape(base_dims), dtype, 60);
      const Tensor updates = input(Shape(update_dims), dtype, 61);
      for (DType index_dtype : {int32, int64}) {
        const Tensor idx = Tensor::from_vector(std::vector<int64_t>{5, 0, 3, 1}, {4}).cast(index_dtype);
        expect_gpu_matches_cpu(
            what("scatter_update", dtype, "axis " + std::to_string(axis)).c_str(),
            [axis](const std::vector<Tensor>& in) { return scatter_updated(in[0], in[1], in[2], axis); },
            {base, updates, idx}, kExact);
      }
    }
  }
}

TEST(CudaOneHot, OutOfRangeIndicesGiveAllOff) {
  STRATA_REQUIRE_GPU();
  const Tensor idx64 = Tensor::from_vector(std::vector<int64_t>{0, 3, -1, 4, 2, 100, 1}, {7});
  const Tensor idx32 = Tensor::from_vector(std::vector<int32_t>{2, -5, 3, 0, 4, 1}, {2, 3});
  const std::vector<std::tuple<DType, double, double>> cases = {
      {float32, 1.0, 0.0}, {float64, 0.9, 0.025}, {float16, 5.0, -1.0}, {bfloat16, 2.0, 0.5},
      {int32, 5.0, -1.0},  {int64, 7.0, 3.0},     {uint8, 255.0, 3.0},  {bool_, 1.0, 0.0}};
  for (const auto& [dtype, on, off] : cases) {
    for (const Tensor& idx : {idx64, idx32}) {
      const DType d = dtype;
      const double on_v = on, off_v = off;
      expect_gpu_matches_cpu(
          what("one_hot", d, idx.shape().to_string()).c_str(),
          [d, on_v, off_v](const std::vector<Tensor>& in) { return one_hot(in[0], 4, on_v, off_v, d); },
          {idx}, kExact);
    }
  }
  const Tensor row = one_hot(idx64.to(Device::gpu(0)), 4);
  const std::vector<float> v = row.to_vector<float>();
  EXPECT_EQ(std::vector<float>(v.begin() + 8, v.begin() + 12), std::vector<float>(4, 0.f));  // -1
  EXPECT_EQ(std::vector<float>(v.begin() + 12, v.begin() + 16), std::vector<float>(4, 0.f));  // 4
  EXPECT_EQ(std::accumulate(v.begin(), v.end(), 0.f), 4.f);
  // Large, and the empty cases.
  expect_gpu_matches_cpu(
      "one_hot large",
      [](const std::vector<Tensor>& in) { return one_hot(in[0], 1000); },
      {random_indices({4096}, 1000, int32, 60)}, kExact);
  expect_gpu_matches_cpu(
      "one_hot depth 0", [](const std::vector<Tensor>& in) { return one_hot(in[0], 0); }, {idx32},
      kExact);
  expect_gpu_matches_cpu(
      "one_hot no indices", [](const std::vector<Tensor>& in) { return one_hot(in[0], 5); },
      {Tensor::empty({0}, int64)}, kExact);
}

TEST(CudaMovement, GradientsOnTheGpu) {
  STRATA_REQUIRE_GPU();
  const Device gpu = Device::gpu(0);
  const Tensor x = random_input({3, 4, 5}, float64, 70).to(gpu);
  const Tensor y = random_input({3, 2, 5}, float64, 71).to(gpu);
  expect_gradients_match("transpose gpu",
                         [](const std::vector<Tensor>& in) { return transpose(in[0], {2, 0, 1}); },
                         {x});
  expect_gradients_match("transpose last two gpu",
                         [](const std::vector<Tensor>& in) { return transpose(in[0], {0, 2, 1}); },
                         {x});
  expect_gradients_match("concat gpu",
                         [](const std::vector<Tensor>& in) { return concat({in[0], in[1]}, 1); },
                         {x, y});
  expect_gradients_match(
      "slice gpu",
      [](const std::vector<Tensor>& in) { return slice(in[0], {1, 0, 2}, {2, 3, -1}); }, {x});
  expect_gradients_match(
      "pad gpu",
      [](const std::vector<Tensor>& in) { return pad(in[0], {{1, 0}, {0, 2}, {1, 1}}, 0.5); },
      {x});
  const Tensor idx = Tensor::from_vector(std::vector<int64_t>{3, 0, 3, 1}, {2, 2}).to(gpu);
  expect_gradients_match(
      "gather gpu", [idx](const std::vector<Tensor>& in) { return gather(in[0], idx, 1); }, {x});
  const Tensor table = random_input({6, 4}, float64, 72).to(gpu);
  const Tensor ids = Tensor::from_vector(std::vector<int32_t>{5, 1, 5, 5, 0}, {5}).to(gpu);
  expect_gradients_match(
      "embedding_lookup gpu",
      [ids](const std::vector<Tensor>& in) { return embedding_lookup(in[0], ids); }, {table});
}

}  // namespace
}  // namespace strata
