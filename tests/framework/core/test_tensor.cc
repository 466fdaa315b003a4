#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>

#include <strata/strata.h>

namespace strata {
namespace {

TEST(Tensor, CreationShapesAndDtypes) {
  Tensor z = zeros({2, 3});
  EXPECT_EQ(z.shape(), Shape({2, 3}));
  EXPECT_EQ(z.dtype(), float32);
  EXPECT_EQ(z.device(), Device::cpu());
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(ones({3}, int64).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(full({2}, 2.5, float64).to_vector<double>(), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(arange(5).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(1.0, 2.0, 0.25, float32).to_vector<float>(),
            (std::vector<float>{1.0f, 1.25f, 1.5f, 1.75f}));
  Tensor t = tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
  EXPECT_EQ(t.dim(-1), 2);
  EXPECT_EQ(t.rank(), 2);
  EXPECT_FLOAT_EQ(Tensor::scalar(3.5f).item<float>(), 3.5f);
}

TEST(Tensor, EveryDtypeRoundTrips) {
  for (DType d : {float32, float64, float16, bfloat16, int32, int64, uint8, bool_}) {
    Tensor t = full({3}, 1.0, d);
    EXPECT_EQ(t.dtype(), d);
    EXPECT_EQ(t.nbytes(), 3 * dtype_size(d)) << dtype_name(d);
    EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 1, 1})) << dtype_name(d);
    EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
  }
  EXPECT_THROW(dtype_from_name("float8"), ValueError);
}

TEST(Tensor, HalfAndBFloat16Conversions) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.1f}) {
    EXPECT_NEAR(float(Half(f)), f, std::fabs(f) * 1e-3f) << f;
  }
  EXPECT_TRUE(std::isinf(float(Half(1e6f))));
  EXPECT_TRUE(std::isnan(float(Half(NAN))));
  EXPECT_EQ(float(BFloat16(1.0f)), 1.0f);
  EXPECT_NEAR(float(BFloat16(3.14159f)), 3.14159f, 0.02f);
  EXPECT_TRUE(std::isnan(float(BFloat16(NAN))));
}

TEST(Tensor, StorageIsAlignedAndRefcounted) {
  Tensor a = zeros({7});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % 64, 0u);
  Tensor b = a;  // copy shares memory
  EXPECT_TRUE(b.shares_memory_with(a));
  b.data<float>()[0] = 5;
  EXPECT_EQ(a.data<float>()[0], 5);
  Tensor c = a.clone();
  EXPECT_FALSE(c.shares_memory_with(a));
}

TEST(Tensor, Axis0SliceIsAView) {
  Tensor t = tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}, {3, 2});
  Tensor s = t.slice(1, 3);
  EXPECT_EQ(s.shape(), Shape({2, 2}));
  EXPECT_TRUE(s.shares_memory_with(t));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(t[2].to_vector<float>(), (std::vector<float>{4, 5}));
  EXPECT_THROW(t.slice(2, 4), IndexError);
  EXPECT_THROW(t[3], IndexError);
}

TEST(Tensor, TypedAccessChecksDtype) {
  Tensor t = zeros({2}, int32);
  EXPECT_THROW(t.data<float>(), DTypeError);
  try {
    t.data<float>();
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos);
  }
  EXPECT_THROW(Tensor().shape(), StateError);
  EXPECT_THROW(zeros({2, 2}).item<float>(), ShapeError);
  EXPECT_THROW(Tensor::from_vector(std::vector<float>{1, 2, 3}, {2, 2}), ShapeError);
  EXPECT_THROW(zeros({-1, 2}), ShapeError);
}

TEST(Tensor, PrintsLikeNumpy) {
  auto str = [](const Tensor& t) {
    std::ostringstream os;
    os << t;
    return os.str();
  };
  EXPECT_EQ(str(tensor({1.f, 2.f, 3.f})), "[1. 2. 3.]");
  EXPECT_EQ(str(tensor({1.f, 2.5f, 3.25f})), "[1.   2.5  3.25]");
  EXPECT_EQ(str(tensor({-1.5f, 2.f})), "[-1.5  2. ]");
  EXPECT_EQ(str(tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3})), "[[1. 2. 3.]\n [4. 5. 6.]]");
  EXPECT_EQ(str(tensor<int64_t>({1, 2, 3, 40}, {2, 2})), "[[ 1  2]\n [ 3 40]]");
  EXPECT_EQ(str(tensor<bool>({true, false})), "[ True False]");
  EXPECT_EQ(str(Tensor::scalar(3.5f)), "3.5");
  EXPECT_EQ(str(tensor({1e-5f, 1.f})), "[1.e-05 1.e+00]");
  EXPECT_EQ(str(arange(2000)), "[   0    1    2 ... 1997 1998 1999]");
  const std::string big = str(zeros({100, 100}));
  EXPECT_EQ(big.substr(0, 26), "[[0. 0. 0. ... 0. 0. 0.]\n ");
  EXPECT_NE(big.find("\n ...\n"), std::string::npos);
  EXPECT_EQ(str(zeros({0})), "[]");
  EXPECT_EQ(str(tensor({0.1f, 0.25f})), "[0.1  0.25]");  // float32 shortest repr, not 0.100000001
}

TEST(Random, SameSeedSameNumbersAnyThreadCount) {
  set_num_threads(1);
  Tensor a = random_normal({100000}, 0.0, 1.0, float32, /*seed=*/3);
  set_num_threads(2);
  Tensor b = random_normal({100000}, 0.0, 1.0, float32, /*seed=*/3);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  // Moments of the distributions.
  const std::vector<float> v = a.to_vector<float>();
  double mean = 0, sq = 0;
  for (float f : v) { mean += f; sq += double(f) * f; }
  mean /= double(v.size());
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(sq / double(v.size()) - mean * mean, 1.0, 0.03);

  const std::vector<float> u = random_uniform({50000}, -2.0, 3.0, float32, 9).to_vector<float>();
  for (float f : u) ASSERT_TRUE(f >= -2.0f && f < 3.0f);
  const std::vector<float> t = truncated_normal({50000}, 1.0, 0.5, float32, 4).to_vector<float>();
  for (float f : t) ASSERT_TRUE(f >= 0.0f && f <= 2.0f);
}

TEST(Random, GlobalSeedReproducesSequence) {
  set_random_seed(11);
  Tensor a1 = random_uniform({10}), a2 = random_uniform({10});
  set_random_seed(11);
  Tensor b1 = random_uniform({10}), b2 = random_uniform({10});
  EXPECT_EQ(a1.to_vector<float>(), b1.to_vector<float>());
  EXPECT_EQ(a2.to_vector<float>(), b2.to_vector<float>());
  EXPECT_NE(a1.to_vector<float>(), a2.to_vector<float>());
  GeneratorState s = get_generator_state();
  Tensor c1 = random_uniform({4});
  set_generator_state(s);
  EXPECT_EQ(random_uniform({4}).to_vector<float>(), c1.to_vector<float>());
}

TEST(Device, NamesParse) {
  EXPECT_EQ(Device::parse("/cpu:0"), Device::cpu());
  EXPECT_EQ(Device::parse("GPU:1"), Device::gpu(1));
  EXPECT_EQ(Device::parse("/device:GPU:0").to_string(), "/gpu:0");
  EXPECT_THROW(Device::parse("tpu:0"), ValueError);
  EXPECT_THROW(Device::parse("/gpu:x"), ValueError);
  // No CUDA backend in a CPU build: a clear error, not a crash.
  if (!has_backend(DeviceType::kCUDA)) EXPECT_THROW(zeros({2}, float32, Device::gpu(0)), DeviceError);
}

}  // namespace
}  // namespace strata
