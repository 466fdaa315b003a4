// The shared host/device math (framework/kernels_math/) compiled by the host compiler alone, as
// the CPU backend compiles it: Philox against the generator's published known answers, and the
// element-wise rules on the inputs where C++ itself gives no answer (overflow, division by zero,
// NaN), against Python's and NumPy's definitions. The CUDA backend runs the same code; its tests
// (tests/cuda/) compare the device results with the CPU's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "framework/kernels_math/elementwise_rules.h"
#include "framework/kernels_math/optimizer_rules.h"
#include "framework/kernels_math/philox.h"

namespace strata {
namespace {

namespace km = kernels_math;

// Known-answer vectors of Philox-4x32-10 from Random123 (Salmon et al., SC'11), kat_vectors:
// counter words c0..c3 and key words k0, k1 as counter_lo = c1:c0, counter_hi = c3:c2, key = k1:k0.
TEST(KernelsMathPhilox, MatchesRandom123KnownAnswers) {
  struct Case {
    uint32_t c[4], k[2], expect[4];
  };
  const Case cases[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
       {0xffffffffu, 0xffffffffu},
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
       {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Case& t : cases) {
    uint32_t out[4];
    philox::block(uint64_t(t.c[1]) << 32 | t.c[0], uint64_t(t.c[3]) << 32 | t.c[2],
                  uint64_t(t.k[1]) << 32 | t.k[0], out);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], t.expect[i]) << "word " << i;
  }
}

TEST(KernelsMathPhilox, UnitConversionsStayBelowOne) {
  EXPECT_EQ(philox::to_unit_float(0), 0.0f);
  EXPECT_LT(philox::to_unit_float(0xffffffffu), 1.0f);
  EXPECT_EQ(philox::to_unit_double(0, 0), 0.0);
  EXPECT_LT(philox::to_unit_double(0xffffffffu, 0xffffffffu), 1.0);
}

TEST(KernelsMathElementwise, IntegerArithmeticWrapsAndDividesAsPython) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(km::wrap_add(kMax, 1), kMin);
  EXPECT_EQ(km::wrap_neg(kMin), kMin);
  EXPECT_EQ(km::wrap_abs(kMin), kMin);
  EXPECT_EQ(km::wrap_abs(uint8_t(200)), uint8_t(200));
  // Python: -7 // 2 == -4, -7 % 2 == 1, 7 % -2 == -1.
  EXPECT_EQ(km::int_floordiv(-7, 2), -4);
  EXPECT_EQ(km::int_floormod(-7, 2), 1);
  EXPECT_EQ(km::int_floormod(7, -2), -1);
  EXPECT_EQ(km::int_floordiv(kMin, -1), kMin);  // the one quotient that overflows wraps
  EXPECT_EQ(km::int_floormod(kMin, -1), 0);
  EXPECT_EQ(km::int_floordiv(5, 0), 0);
  EXPECT_EQ(km::int_floormod(5, 0), 0);
  EXPECT_EQ(km::int_pow(3, 4), 81);
  EXPECT_EQ(km::int_pow(2, -1), 0);
  EXPECT_EQ(km::int_pow(-1, -3), -1);
  EXPECT_EQ(km::int_pow(int8_t(2), int8_t(8)), int8_t(0));  // 256 wraps to 0 in 8 bits
  EXPECT_EQ(km::sign_of(uint8_t(7)), uint8_t(1));
  EXPECT_EQ(km::sign_of(int16_t(-7)), int16_t(-1));
}

TEST(KernelsMathElementwise, FloatRulesPropagateNanAsNumPy) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(km::float_floormod(-7.5f, 2.0f), 0.5f);  // Python: -7.5 % 2 == 0.5
  EXPECT_EQ(km::float_floormod(7.5, -2.0), -0.5);
  EXPECT_TRUE(std::isnan(km::maximum_nan(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(km::maximum_nan(1.0f, nan)));
  EXPECT_TRUE(std::isnan(km::minimum_nan(1.0f, nan)));
  EXPECT_TRUE(std::isnan(km::add_relu(nan, 1.0f)));
  EXPECT_EQ(km::add_relu(-3.0f, 1.0f), 0.0f);
  EXPECT_TRUE(std::isnan(km::sign_of(nan)));
  EXPECT_TRUE(std::isnan(km::clip_to(nan, 0.0f, 1.0f)));
  EXPECT_EQ(km::clip_to(2.0f, 0.0f, 1.0f), 1.0f);
}

TEST(KernelsMathElementwise, FloatsSaturateGoingToIntegers) {
  EXPECT_EQ(km::saturate_to_integer<int8_t>(1e9f), int8_t(127));
  EXPECT_EQ(km::saturate_to_integer<int8_t>(-1e9), int8_t(-128));
  EXPECT_EQ(km::saturate_to_integer<uint8_t>(-5.0f), uint8_t(0));
  EXPECT_EQ(km::saturate_to_integer<int32_t>(std::numeric_limits<double>::quiet_NaN()), 0);
  EXPECT_EQ(km::saturate_to_integer<int64_t>(-2.9), int64_t(-2));  // truncates toward zero
  EXPECT_EQ(km::convert_from_double<bool>(0.5), true);
  EXPECT_EQ(km::convert_from_double<int16_t>(1e6), int16_t(32767));
}

// The rules are Keras 3's formulas; spelled out here in plain float arithmetic (x86-64 has no
// FMA by default, so each operation rounds once as the rule's do).
TEST(KernelsMathOptimizer, AdamRuleIsKerasFormula) {
  OptimizerUpdate u;
  u.kind = OptimizerKind::kAdam;
  u.learning_rate = 0.01f;
  u.step = 3;
  const km::OptimizerScalars c = km::optimizer_scalars(u);
  float w = 0.5f, m = 0.1f, v = 0.02f, vhat = 0.0f;
  const float g = 0.3f;
  const float new_w = km::adam_rule<false>(w, g, m, v, vhat, c);
  const float m_expect = 0.1f + (g - 0.1f) * (1.0f - u.beta_1);
  const float v_expect = 0.02f + (g * g - 0.02f) * (1.0f - u.beta_2);
  const double alpha = 0.01 * std::sqrt(1.0 - std::pow(double(u.beta_2), 3.0)) /
                       (1.0 - std::pow(double(u.beta_1), 3.0));
  EXPECT_EQ(m, m_expect);
  EXPECT_EQ(v, v_expect);
  EXPECT_EQ(new_w, 0.5f - (m_expect * float(alpha)) / (std::sqrt(v_expect) + u.epsilon));
  EXPECT_EQ(vhat, 0.0f);  // untouched without amsgrad
}

TEST(KernelsMathOptimizer, NanGradientStaysNanThroughTheClip) {
  OptimizerUpdate u;
  u.kind = OptimizerKind::kSGD;
  u.clip_value = 1.0f;
  const km::OptimizerScalars c = km::optimizer_scalars(u);
  EXPECT_TRUE(std::isnan(km::prepare_gradient(std::numeric_limits<float>::quiet_NaN(), c)));
  EXPECT_EQ(km::prepare_gradient(5.0f, c), 1.0f);
  EXPECT_EQ(km::prepare_gradient(-5.0f, c), -1.0f);
}

TEST(KernelsMathOptimizer, SlotCountsFollowTheBackendContract) {
  OptimizerUpdate u;
  u.kind = OptimizerKind::kSGD;
  EXPECT_EQ(km::optimizer_slot_count(u), 0u);
  u.momentum = 0.9f;
  EXPECT_EQ(km::optimizer_slot_count(u), 1u);
  u.kind = OptimizerKind::kAdamW;
  u.amsgrad = true;
  EXPECT_EQ(km::optimizer_slot_count(u), 3u);
  u.kind = OptimizerKind::kRMSprop;
  u.centered = true;
  EXPECT_EQ(km::optimizer_slot_count(u), 3u);
}

}  // namespace
}  // namespace strata
