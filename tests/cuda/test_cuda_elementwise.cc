// The CUDA elementwise kernels (cast, unary, binary, where, clip, sum_to) against the CPU
// backend, the reference for every contract: every op on every dtype, broadcasting, empty and
// large (multi-block, multi-pass) tensors, special values, and gradients through the GPU ops.
// An op the CPU rejects for a dtype (DTypeError) must be rejected on the GPU too.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cuda/gpu_compare.h"
#include "cuda/gpu_test_utils.h"
#include "framework/backend/backend.h"

namespace strata {
namespace {

using testing::expect_gradients_match;
using testing::expect_values;
using testing::tolerance_for;

const Device kGpu = Device::gpu(0);
const std::vector<DType> kAllDTypes = {float32, float64, float16, bfloat16,
                                       int32,   int64,   uint8,   bool_};

std::string label(const std::string& what, DType dtype) { return what + " / " + dtype_name(dtype); }

// CPU test data: uniform in [lo, hi] drawn in float64, rounded to whole numbers for integer
// dtypes (saturating at uint8's 0), or x > (lo + hi) / 2 for bool.
Tensor sample(const Shape& shape, DType dtype, int64_t seed, double lo = -3.0, double hi = 3.0) {
  const Tensor x = random_uniform(shape, lo, hi, float64, seed, Device::cpu());
  if (dtype == bool_) return greater(x, full(Shape{}, (lo + hi) / 2, float64, Device::cpu()));
  if (is_integral(dtype)) return round(x).cast(dtype);
  return x.cast(dtype);
}

Shape broadcast(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(size_t(rank), 1);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a.dim(ia) : 1, db = ib >= 0 ? b.dim(ib) : 1;
    dims[size_t(i)] = da == 1 ? db : da;
  }
  return Shape(dims);
}

// The raw kernels, for ops without a front-end of their own (tanh, expm1, floor_mod, ...) and to
// reach every dtype the backend contract covers.
Tensor unary_kernel(UnaryOp op, const Tensor& x) {
  const bool to_bool = op == UnaryOp::kLogicalNot || op == UnaryOp::kIsNan || op == UnaryOp::kIsFinite;
  Tensor out = Tensor::empty(x.shape(), to_bool ? bool_ : x.dtype(), x.device());
  backend_for(x).unary(op, x, out);
  return out;
}

Tensor binary_kernel(BinaryOp op, const Tensor& a, const Tensor& b) {
  const bool to_bool = op >= BinaryOp::kEqual;
  Tensor out = Tensor::empty(broadcast(a.shape(), b.shape()), to_bool ? bool_ : a.dtype(), a.device());
  backend_for(a).binary(op, a, b, out);
  return out;
}

// Runs f on the CPU inputs and on copies on /gpu:0 and compares, or, when the CPU rejects the
// dtype with DTypeError, checks the GPU rejects it too.
void expect_gpu_like_cpu(const std::string& what,
                         const std::function<Tensor(const std::vector<Tensor>&)>& f,
                         const std::vector<Tensor>& inputs, double rtol, double atol) {
  SCOPED_TRACE(what);
  std::vector<Tensor> gpu_inputs;
  for (const Tensor& x : inputs) gpu_inputs.push_back(x.to(kGpu));
  Tensor expected;
  try {
    expected = f(inputs);
  } catch (const DTypeError&) {
    EXPECT_THROW(f(gpu_inputs), DTypeError);
    return;
  }
  const Tensor actual = f(gpu_inputs);
  EXPECT_EQ(actual.device(), kGpu);
  expect_values(actual, expected, rtol, atol);
}

// Tolerance for an op's result: the dtype's usual one for floats, exact otherwise.
void expect_gpu_like_cpu(const std::string& what,
                         const std::function<Tensor(const std::vector<Tensor>&)>& f,
                         const std::vector<Tensor>& inputs, DType dtype) {
  const testing::Tolerance tol = is_floating(dtype) ? tolerance_for(dtype) : testing::Tolerance{0, 0};
  expect_gpu_like_cpu(what, f, inputs, tol.rtol, tol.atol);
}

// Sums of a float32 matrix along `axis` (0: column sums, 1: row sums) against the float64 sum.
// The CPU and the GPU add in different orders, each with float32 rounding of up to about
// eps * sum|x| per output, and sums that cancel to near 0 have a large relative error either
// way (seen on an H200: 0.371313 vs the CPU's 0.371376, true 0.3713...): so the bound is
// 8 * eps * sum|x| of each output's terms, which a missing or doubled term (about 1.5 here,
// against a bound near 1e-3) exceeds by far.
void expect_sums_like_float64(const std::string& what, const Tensor& gpu_sum, const Tensor& x,
                              int axis) {
  SCOPED_TRACE(what);
  EXPECT_EQ(gpu_sum.device(), kGpu);
  const std::vector<double> v = x.to_vector<double>();
  const int64_t rows = x.dim(0), cols = x.dim(1);
  const int64_t outputs = axis == 0 ? cols : rows;
  std::vector<double> sum(size_t(outputs), 0.0), abs_sum(size_t(outputs), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const size_t o = size_t(axis == 0 ? c : r);
      sum[o] += v[size_t(r * cols + c)];
      abs_sum[o] += std::fabs(v[size_t(r * cols + c)]);
    }
  }
  const std::vector<double> got = gpu_sum.to_vector<double>();
  ASSERT_EQ(got.size(), sum.size());
  int failures = 0;
  for (size_t o = 0; o < got.size() && failures < 5; ++o) {
    const double bound = 8.0 * std::numeric_limits<float>::epsilon() * abs_sum[o];
    if (!(std::fabs(got[o] - sum[o]) <= bound)) {
      ++failures;
      ADD_FAILURE() << "output " << o << ": " << got[o] << " vs float64 " << sum[o]
                    << " (bound " << bound << ")";
    }
  }
}

const std::vector<UnaryOp> kUnaryOps = {
    UnaryOp::kNeg,   UnaryOp::kAbs,   UnaryOp::kSign,       UnaryOp::kExp,        UnaryOp::kLog,
    UnaryOp::kLog1p, UnaryOp::kExpm1, UnaryOp::kSqrt,       UnaryOp::kRsqrt,      UnaryOp::kSquare,
    UnaryOp::kReciprocal, UnaryOp::kSin, UnaryOp::kCos,     UnaryOp::kTanh,       UnaryOp::kSigmoid,
    UnaryOp::kFloor, UnaryOp::kCeil,  UnaryOp::kRound,      UnaryOp::kLogicalNot, UnaryOp::kIsNan,
    UnaryOp::kIsFinite};

const std::vector<BinaryOp> kBinaryOps = {
    BinaryOp::kAdd,   BinaryOp::kSub,       BinaryOp::kMul,       BinaryOp::kDiv,
    BinaryOp::kPow,   BinaryOp::kMaximum,   BinaryOp::kMinimum,   BinaryOp::kFloorMod,
    BinaryOp::kAddReLU, BinaryOp::kEqual,   BinaryOp::kNotEqual,  BinaryOp::kLess,
    BinaryOp::kLessEqual, BinaryOp::kGreater, BinaryOp::kGreaterEqual, BinaryOp::kLogicalAnd,
    BinaryOp::kLogicalOr};

bool needs_positive(UnaryOp op) {
  return op == UnaryOp::kLog || op == UnaryOp::kLog1p || op == UnaryOp::kSqrt ||
         op == UnaryOp::kRsqrt || op == UnaryOp::kReciprocal;
}

TEST(CudaElementwise, EveryUnaryOpOnEveryDTypeMatchesCpu) {
  STRATA_REQUIRE_GPU();
  for (size_t k = 0; k < kUnaryOps.size(); ++k) {
    const UnaryOp op = kUnaryOps[k];
    for (DType dtype : kAllDTypes) {
      const double lo = needs_positive(op) ? 0.1 : -3.0;
      const Tensor x = sample({7, 9}, dtype, int64_t(100 + k), lo, 3.0);
      expect_gpu_like_cpu(label("unary op " + std::to_string(k), dtype),
                          [op](const std::vector<Tensor>& in) { return unary_kernel(op, in[0]); },
                          {x}, dtype);
    }
  }
}

TEST(CudaElementwise, UnarySpecialValues) {
  STRATA_REQUIRE_GPU();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<double> v = {0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e30, -1e30,
                                 inf,  -inf, nan,  88.0, -88.0, 1e-30, 3.0};
  for (DType dtype : {float32, float64, float16, bfloat16}) {
    const Tensor x = Tensor::from_vector(v, Shape{int64_t(v.size())}).cast(dtype);
    for (size_t k = 0; k < kUnaryOps.size(); ++k) {
      const UnaryOp op = kUnaryOps[k];
      expect_gpu_like_cpu(label("special values, unary op " + std::to_string(k), dtype),
                          [op](const std::vector<Tensor>& in) { return unary_kernel(op, in[0]); },
                          {x}, dtype);
    }
  }
}

// Operand ranges per op and dtype: whole numbers around zero (division by zero included) for
// integers, positive bases for floating pow.
std::pair<Tensor, Tensor> binary_inputs(BinaryOp op, DType dtype, const Shape& sa,
                                        const Shape& sb, int64_t seed) {
  if (dtype == uint8) return {sample(sa, dtype, seed, 0, 14), sample(sb, dtype, seed + 1, 0, 6)};
  if (is_integral(dtype)) {
    if (op == BinaryOp::kPow) return {sample(sa, dtype, seed, -3, 3), sample(sb, dtype, seed + 1, -2, 7)};
    return {sample(sa, dtype, seed, -7, 7), sample(sb, dtype, seed + 1, -4, 4)};
  }
  if (op == BinaryOp::kPow) return {sample(sa, dtype, seed, 0.1, 3), sample(sb, dtype, seed + 1, -2, 2)};
  return {sample(sa, dtype, seed), sample(sb, dtype, seed + 1)};
}

TEST(CudaElementwise, EveryBinaryOpOnEveryDTypeAndBroadcastMatchesCpu) {
  STRATA_REQUIRE_GPU();
  // Same shape (the fast path), a trailing vector, an outer product, scalars on either side, a
  // middle broadcast, and both operands broadcast in several dims.
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{6, 5}, {6, 5}}, {{6, 5}, {5}},       {{6, 1}, {1, 5}},       {{}, {6, 5}},
      {{6, 5}, {}},     {{4, 1, 3}, {2, 1}}, {{2, 1, 4, 1}, {3, 1, 5}}, {{1}, {1}}};
  for (size_t k = 0; k < kBinaryOps.size(); ++k) {
    const BinaryOp op = kBinaryOps[k];
    for (DType dtype : kAllDTypes) {
      for (size_t s = 0; s < shapes.size(); ++s) {
        const auto [a, b] = binary_inputs(op, dtype, shapes[s].first, shapes[s].second,
                                          int64_t(1000 + 10 * k + s));
        expect_gpu_like_cpu(
            label("binary op " + std::to_string(k) + ", shapes " + shapes[s].first.to_string() +
                      " and " + shapes[s].second.to_string(),
                  dtype),
            [op](const std::vector<Tensor>& in) { return binary_kernel(op, in[0], in[1]); },
            {a, b}, dtype);
      }
    }
  }
}

TEST(CudaElementwise, IntegerDivisionModuloAndOverflowAreTheCpus) {
  STRATA_REQUIRE_GPU();
  const int32_t imin = std::numeric_limits<int32_t>::min(), imax = std::numeric_limits<int32_t>::max();
  const Tensor a = tensor({7, -7, 7, -7, 5, imin, imin, imax, 0, -1}, {10});
  const Tensor b = tensor({2, 2, -2, -2, 0, -1, 2, 1, 0, 3}, {10});
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                      BinaryOp::kFloorMod, BinaryOp::kPow}) {
    expect_gpu_like_cpu(
        "int32 op " + std::to_string(int(op)),
        [op](const std::vector<Tensor>& in) { return binary_kernel(op, in[0], in[1]); }, {a, b},
        int32);
  }
  const int64_t lmin = std::numeric_limits<int64_t>::min();
  const Tensor a64 = tensor({lmin, int64_t(1) << 40, int64_t(-9), int64_t(3)}, {4});
  const Tensor b64 = tensor({int64_t(-1), int64_t(1) << 30, int64_t(4), int64_t(40)}, {4});
  for (BinaryOp op : {BinaryOp::kMul, BinaryOp::kDiv, BinaryOp::kFloorMod, BinaryOp::kPow}) {
    expect_gpu_like_cpu(
        "int64 op " + std::to_string(int(op)),
        [op](const std::vector<Tensor>& in) { return binary_kernel(op, in[0], in[1]); },
        {a64, b64}, int64);
  }
  // Wrapping negation and absolute value of the minimum.
  expect_gpu_like_cpu("int32 neg/abs",
                      [](const std::vector<Tensor>& in) {
                        return add(negative(in[0]), abs(in[0]));
                      },
                      {tensor({imin, imax, 0, -5}, {4})}, int32);
}

TEST(CudaElementwise, FloatSpecialValuesInBinaryOps) {
  STRATA_REQUIRE_GPU();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<double> va = {1.0, -1.0, 0.0, nan, 2.0, inf, -inf, 5.5, -5.5, 0.0};
  const std::vector<double> vb = {nan, 2.0, 0.0, 1.0, inf, inf, 3.0, -2.0, 2.0, -0.0};
  for (DType dtype : {float32, float64, float16, bfloat16}) {
    const Tensor a = Tensor::from_vector(va, {10}).cast(dtype);
    const Tensor b = Tensor::from_vector(vb, {10}).cast(dtype);
    for (BinaryOp op : kBinaryOps) {
      if (op == BinaryOp::kLogicalAnd || op == BinaryOp::kLogicalOr) continue;  // bool only
      expect_gpu_like_cpu(
          label("special values, binary op " + std::to_string(int(op)), dtype),
          [op](const std::vector<Tensor>& in) { return binary_kernel(op, in[0], in[1]); },
          {a, b}, dtype);
    }
  }
}

TEST(CudaElementwise, CastBetweenEveryPairOfDTypes) {
  STRATA_REQUIRE_GPU();
  const double inf = std::numeric_limits<double>::infinity();
  // Rounding ties, saturation bounds of every integer type, overflow to inf in 16 bits, NaN.
  const std::vector<double> floats = {0.0,  -0.0,  0.5,  -0.5, 1.5,    2.5,   -2.5,   127.5,
                                      255.5, 256.0, -129, 3e9,  -3e9,   1e20,  -1e20,  inf,
                                      -inf,  std::nan(""), 65504, 70000, 1e-8, 16777217, 0.1};
  std::vector<Tensor> sources;
  for (DType d : {float32, float64, float16, bfloat16}) sources.push_back(Tensor::from_vector(floats).cast(d));
  sources.push_back(tensor({0, 1, -1, 127, 128, 255, 256, -129, 65504, 16777217,
                            std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}));
  sources.push_back(tensor({int64_t(0), int64_t(-1), (int64_t(1) << 40) + 1, int64_t(1) << 62,
                            std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                            int64_t(4294967297)}));
  sources.push_back(tensor({uint8_t(0), uint8_t(1), uint8_t(127), uint8_t(128), uint8_t(255)}));
  sources.push_back(tensor({true, false, true}));
  for (const Tensor& x : sources) {
    for (DType to : kAllDTypes) {
      expect_gpu_like_cpu(std::string("cast ") + dtype_name(x.dtype()) + " -> " + dtype_name(to),
                          [to](const std::vector<Tensor>& in) { return cast(in[0], to); }, {x},
                          0.0, 0.0);
    }
  }
}

TEST(CudaElementwise, WhereBroadcastsEveryDType) {
  STRATA_REQUIRE_GPU();
  const std::vector<std::vector<Shape>> shapes = {
      {{6, 5}, {6, 5}, {6, 5}}, {{6, 1}, {1, 5}, {}}, {{}, {6, 5}, {5}}, {{2, 1, 5}, {3, 1}, {2, 3, 5}}};
  for (DType dtype : kAllDTypes) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      const Tensor c = sample(shapes[s][0], bool_, int64_t(7 + s));
      const Tensor a = sample(shapes[s][1], dtype, int64_t(17 + s));
      const Tensor b = sample(shapes[s][2], dtype, int64_t(27 + s));
      expect_gpu_like_cpu(label("where, case " + std::to_string(s), dtype),
                          [](const std::vector<Tensor>& in) { return where(in[0], in[1], in[2]); },
                          {c, a, b}, 0.0, 0.0);
    }
  }
}

TEST(CudaElementwise, ClipEveryDTypeKeepsNan) {
  STRATA_REQUIRE_GPU();
  for (DType dtype : kAllDTypes) {
    const Tensor x = sample({5, 8}, dtype, 3, -10, 10);
    // Bounds beyond an integer type's range saturate, as the CPU's conversion does.
    // The kernel directly: the front-end rejects bool, the backend contract covers it.
    for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{{-2.5, 4.0}, {-1e12, 3.0}, {0.0, 0.0}}) {
      expect_gpu_like_cpu(label("clip [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", dtype),
                          [lo = lo, hi = hi](const std::vector<Tensor>& in) {
                            Tensor out = Tensor::empty(in[0].shape(), in[0].dtype(), in[0].device());
                            backend_for(in[0]).clip(in[0], lo, hi, out);
                            return out;
                          },
                          {x}, 0.0, 0.0);
    }
  }
  const Tensor with_nan = tensor({1.0f, std::nanf(""), -5.0f, 5.0f});
  expect_gpu_like_cpu("clip NaN",
                      [](const std::vector<Tensor>& in) { return clip_by_value(in[0], -1, 1); },
                      {with_nan}, 0.0, 0.0);
}

TEST(CudaElementwise, SumToEveryShapeKind) {
  STRATA_REQUIRE_GPU();
  // Leading dims (column kernel), trailing dims (row kernel when rows are long, else the general
  // kernel), all, interleaved (general kernel), size-1 dims only (a copy), and out's own shape.
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{6, 5}, {5}},       {{6, 5}, {1, 5}},       {{6, 5}, {6, 1}},    {{6, 5}, {}},
      {{2, 3, 4, 5}, {3, 1, 5}}, {{2, 3, 4}, {2, 1, 4}}, {{4, 1, 3}, {1, 1, 3}}, {{1, 3}, {3}},
      {{2, 3}, {2, 3}},    {{7, 300}, {300}},      {{300, 7}, {300, 1}}, {{5, 300}, {5, 1}},
      {{2, 5, 300}, {2, 5, 1}}, {{3, 40, 50}, {50}}};
  for (DType dtype : {float32, float64, float16, bfloat16, int32, int64, uint8}) {
    for (size_t k = 0; k < cases.size(); ++k) {
      const Tensor x = sample(cases[k].first, dtype, int64_t(50 + k), 0, 4);
      const Shape to = cases[k].second;
      expect_gpu_like_cpu(label("sum_to " + cases[k].first.to_string() + " -> " + to.to_string(), dtype),
                          [to](const std::vector<Tensor>& in) { return sum_to_shape(in[0], to); },
                          {x}, dtype);
    }
  }
}

TEST(CudaElementwise, SumToLongReductionsTakeSeveralPasses) {
  STRATA_REQUIRE_GPU();
  // Column sums over 600000 rows (512-row pieces: three passes), row sums over 3e6 columns
  // (4096-element pieces: two passes), one sum over 17e6 elements (three passes). Integers are
  // exact whatever the order; floats of one sign keep the order's rounding small.
  expect_gpu_like_cpu("columns int32",
                      [](const std::vector<Tensor>& in) { return sum_to_shape(in[0], {2}); },
                      {sample({600000, 2}, int32, 1, -100, 100)}, int32);
  expect_gpu_like_cpu("columns float64",
                      [](const std::vector<Tensor>& in) { return sum_to_shape(in[0], {2}); },
                      {sample({600000, 2}, float64, 2)}, float64);
  expect_gpu_like_cpu("rows float32",
                      [](const std::vector<Tensor>& in) { return sum_to_shape(in[0], {3, 1}); },
                      {random_uniform({3, 3000000}, 0, 1, float32, 3, Device::cpu())}, float32);
  expect_gpu_like_cpu("rows int64",
                      [](const std::vector<Tensor>& in) { return sum_to_shape(in[0], {3, 1}); },
                      {sample({3, 3000000}, int64, 4, -1000, 1000)}, int64);
  expect_gpu_like_cpu("all float32",
                      [](const std::vector<Tensor>& in) { return sum_to_shape(in[0], {}); },
                      {random_uniform({17000000}, 0, 1, float32, 5, Device::cpu())}, float32);
  expect_gpu_like_cpu("all float16",
                      [](const std::vector<Tensor>& in) { return sum_to_shape(in[0], {}); },
                      {random_uniform({70000}, 0, 0.01, float32, 6, Device::cpu()).cast(float16)},
                      float16);
}

TEST(CudaElementwise, EmptyTensors) {
  STRATA_REQUIRE_GPU();
  const Tensor x = sample({0, 3}, float32, 1);
  const Tensor row = sample({3}, float32, 2);
  expect_gpu_like_cpu("unary", [](const std::vector<Tensor>& in) { return exp(in[0]); }, {x}, float32);
  expect_gpu_like_cpu("binary", [](const std::vector<Tensor>& in) { return in[0] * in[1]; },
                      {x, row}, float32);
  expect_gpu_like_cpu("cast", [](const std::vector<Tensor>& in) { return cast(in[0], int32); },
                      {x}, int32);
  expect_gpu_like_cpu("clip", [](const std::vector<Tensor>& in) { return clip_by_value(in[0], 0, 1); },
                      {x}, float32);
  expect_gpu_like_cpu("where",
                      [](const std::vector<Tensor>& in) {
                        return where(greater(in[0], in[1]), in[0], in[1]);
                      },
                      {x, row}, float32);
  // An empty sum is zero.
  expect_gpu_like_cpu("sum_to of nothing",
                      [](const std::vector<Tensor>& in) { return sum_to_shape(in[0], {3}); }, {x},
                      float32);
  expect_gpu_like_cpu("sum_to of nothing, int",
                      [](const std::vector<Tensor>& in) { return sum_to_shape(in[0], {1, 3}); },
                      {sample({0, 3}, int32, 3)}, int32);
}

TEST(CudaElementwise, LargeTensorsSpanManyBlocks) {
  STRATA_REQUIRE_GPU();
  // 1.1M elements: thousands of blocks, several grid-stride rounds for the capped grids.
  const Tensor a = sample({1100, 1000}, float32, 1);
  const Tensor b = sample({1100, 1000}, float32, 2);
  const Tensor v = sample({1000}, float32, 3);
  const Tensor col = sample({1100, 1}, float32, 4);
  using In = std::vector<Tensor>;
  expect_gpu_like_cpu("same shape", [](const In& in) { return in[0] * in[1]; }, {a, b}, float32);
  expect_gpu_like_cpu("row vector", [](const In& in) { return in[0] - in[1]; }, {a, v}, float32);
  expect_gpu_like_cpu("column", [](const In& in) { return in[0] / in[1]; }, {a, col}, float32);
  expect_gpu_like_cpu("unary", [](const In& in) { return sin(in[0]); }, {a}, float32);
  expect_gpu_like_cpu("cast", [](const In& in) { return cast(in[0], bfloat16); }, {a}, bfloat16);
  expect_gpu_like_cpu("compare", [](const In& in) { return greater(in[0], in[1]); }, {a, v}, bool_);
  expect_gpu_like_cpu("where", [](const In& in) { return where(less(in[0], in[1]), in[0], in[2]); },
                      {a, b, col}, float32);
  expect_sums_like_float64("sum_to columns", sum_to_shape(a.to(kGpu), {1000}), a, 0);
  expect_sums_like_float64("sum_to rows", sum_to_shape(a.to(kGpu), {1100, 1}), a, 1);
  expect_gpu_like_cpu("add_relu", [](const In& in) { return add_relu(in[0], in[1]); }, {a, v},
                      float32);
}

TEST(CudaElementwise, OutputsStayOnTheGpuAndInputsUnchanged) {
  STRATA_REQUIRE_GPU();
  const Tensor x = sample({4, 4}, float32, 9).to(kGpu);
  const std::vector<float> before = x.to_vector<float>();
  const Tensor y = exp(x) + x;
  EXPECT_EQ(y.device(), kGpu);
  EXPECT_EQ(x.to_vector<float>(), before);
}

TEST(CudaElementwise, GradientsOnTheGpu) {
  STRATA_REQUIRE_GPU();
  using In = std::vector<Tensor>;
  const Tensor a = sample({3, 4}, float64, 1).to(kGpu);
  const Tensor b = sample({4}, float64, 2).to(kGpu);
  const Tensor pos = sample({3, 4}, float64, 3, 0.5, 2.0).to(kGpu);
  const Tensor pos_row = sample({4}, float64, 4, 0.5, 2.0).to(kGpu);
  expect_gradients_match("multiply (broadcast)", [](const In& in) { return in[0] * in[1]; }, {a, b});
  expect_gradients_match("divide (broadcast)", [](const In& in) { return in[0] / in[1]; },
                         {a, pos_row});
  expect_gradients_match("subtract", [](const In& in) { return in[0] - in[1]; }, {a, b});
  expect_gradients_match("exp", [](const In& in) { return exp(in[0]); }, {a});
  expect_gradients_match("log", [](const In& in) { return log(in[0]); }, {pos});
  expect_gradients_match("sqrt", [](const In& in) { return sqrt(in[0]); }, {pos});
  expect_gradients_match("sin", [](const In& in) { return sin(in[0]); }, {a});
  expect_gradients_match("pow", [](const In& in) { return pow(in[0], in[1]); }, {pos, b});
  expect_gradients_match("maximum", [](const In& in) { return maximum(in[0], in[1]); }, {a, b});
  expect_gradients_match("where", [](const In& in) {
    return where(greater(in[0], in[1]), in[0] * in[0], in[1]);
  }, {a, b});
  expect_gradients_match("clip_by_value", [](const In& in) { return clip_by_value(in[0], -1, 1); },
                         {a});
  expect_gradients_match("cast", [](const In& in) { return cast(in[0], float32) * 2.0; }, {a},
                         {1e-2, 1e-2, 1e-3});
}

}  // namespace
}  // namespace strata
