// Each schedule's values at chosen steps, worked out from Keras's formulas.
#include <gtest/gtest.h>

#include <cmath>

#include <strata/strata.h>

namespace strata {
namespace {

using optimizers::CosineDecay;
using optimizers::ExponentialDecay;
using optimizers::PiecewiseConstantDecay;

TEST(LearningRateSchedule, PiecewiseConstantDecay) {
  // values[i] while step <= boundaries[i].
  PiecewiseConstantDecay s({10, 20}, {1.0, 0.5, 0.1});
  EXPECT_DOUBLE_EQ(s(0), 1.0);
  EXPECT_DOUBLE_EQ(s(10), 1.0);
  EXPECT_DOUBLE_EQ(s(11), 0.5);
  EXPECT_DOUBLE_EQ(s(20), 0.5);
  EXPECT_DOUBLE_EQ(s(21), 0.1);
  EXPECT_DOUBLE_EQ(s(1000000), 0.1);
  EXPECT_EQ(s.name(), "PiecewiseConstantDecay");
  EXPECT_EQ(s.get_config(),
            "{\"boundaries\": [10, 20], \"values\": [1, 0.5, 0.1], \"name\": "
            "\"PiecewiseConstantDecay\"}");
  try {
    PiecewiseConstantDecay bad({10, 20}, {1.0, 0.5});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("one more element than boundaries"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(PiecewiseConstantDecay({20, 10}, {1.0, 0.5, 0.1}), ValueError);
}

TEST(LearningRateSchedule, ExponentialDecay) {
  // 0.1 * 0.5^(step / 10)
  ExponentialDecay s(0.1, 10, 0.5);
  EXPECT_DOUBLE_EQ(s(0), 0.1);
  EXPECT_NEAR(s(5), 0.1 * std::sqrt(0.5), 1e-15);  // 0.0707107
  EXPECT_NEAR(s(10), 0.05, 1e-15);
  EXPECT_NEAR(s(30), 0.0125, 1e-15);
  // staircase: 0.1 * 0.5^floor(step / 10)
  ExponentialDecay stairs(0.1, 10, 0.5, /*staircase=*/true);
  EXPECT_DOUBLE_EQ(stairs(9), 0.1);
  EXPECT_DOUBLE_EQ(stairs(15), 0.05);
  EXPECT_NE(stairs.get_config().find("\"staircase\": true"), std::string::npos);
  EXPECT_NE(s.get_config().find("\"initial_learning_rate\": 0.1"), std::string::npos)
      << s.get_config();
  try {
    ExponentialDecay bad(0.1, 0, 0.5);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("decay_steps must be > 0, got 0"), std::string::npos);
  }
}

TEST(LearningRateSchedule, CosineDecay) {
  // 1.0 * (0.5 (1 + cos(pi * min(step, 10) / 10))): 1 at 0, 0.5 at 5, 0 from 10 on.
  CosineDecay s(1.0, 10);
  EXPECT_DOUBLE_EQ(s(0), 1.0);
  EXPECT_NEAR(s(5), 0.5, 1e-15);
  EXPECT_NEAR(s(10), 0.0, 1e-15);
  EXPECT_NEAR(s(25), 0.0, 1e-15);
  // alpha 0.1: (1 - 0.1) * cosine + 0.1 -> 0.55 at 5, 0.1 from 10 on.
  CosineDecay floor(1.0, 10, 0.1);
  EXPECT_NEAR(floor(5), 0.55, 1e-15);
  EXPECT_NEAR(floor(100), 0.1, 1e-15);
}

TEST(LearningRateSchedule, CosineDecayWithWarmup) {
  // Linear 0 -> 1 over 5 steps, then cosine from 1 over 10 steps: 0.4 at 2, 1 at 5,
  // 0.5 at 10 (halfway through the decay), 0 from 15 on.
  CosineDecay s(0.0, 10, 0.0, /*warmup_target=*/1.0, /*warmup_steps=*/5);
  EXPECT_DOUBLE_EQ(s(0), 0.0);
  EXPECT_NEAR(s(2), 0.4, 1e-15);
  EXPECT_NEAR(s(5), 1.0, 1e-15);
  EXPECT_NEAR(s(10), 0.5, 1e-15);
  EXPECT_NEAR(s(15), 0.0, 1e-15);
  EXPECT_NEAR(s(1000), 0.0, 1e-15);
  EXPECT_NE(s.get_config().find("\"warmup_target\": 1"), std::string::npos) << s.get_config();
  EXPECT_NE(CosineDecay(1.0, 10).get_config().find("\"warmup_target\": null"), std::string::npos);
  EXPECT_THROW(CosineDecay(1.0, 10, 0.0, 1.0, -1), ValueError);
}

}  // namespace
}  // namespace strata
