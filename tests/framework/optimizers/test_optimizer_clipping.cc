// clipnorm, clipvalue and global_clipnorm, folded into the fused update. SGD with lr 1 from
// w = 0 makes the variable equal minus the clipped gradient.
#include <gtest/gtest.h>

#include "optimizer_test_util.h"

namespace strata {
namespace {

using testing::make_var;

std::vector<float> values(const VariablePtr& v) { return v->value().to_vector<float>(); }

TEST(OptimizerClipping, ClipnormRescalesEachGradientOnItsOwn) {
  // g1 = [3, 4] has norm 5 > 1: scaled by 1/5 to [0.6, 0.8]. g2 = [0.3, 0.4] has norm 0.5 <= 1:
  // unchanged.
  auto w1 = make_var("w1", {0.0f, 0.0f});
  auto w2 = make_var("w2", {0.0f, 0.0f});
  optimizers::SGD sgd(1.0, optimizers::SGDOptions().clipnorm(1.0));
  sgd.apply_gradients({tensor({3.0f, 4.0f}), tensor({0.3f, 0.4f})}, {w1, w2});
  EXPECT_NEAR(values(w1)[0], -0.6, 1e-6);
  EXPECT_NEAR(values(w1)[1], -0.8, 1e-6);
  EXPECT_NEAR(values(w2)[0], -0.3, 1e-6);
  EXPECT_NEAR(values(w2)[1], -0.4, 1e-6);
}

TEST(OptimizerClipping, ClipvalueClipsEachElement) {
  // clipvalue 0.5: [3, -0.2, -4] -> [0.5, -0.2, -0.5].
  auto w = make_var("w", {0.0f, 0.0f, 0.0f});
  optimizers::SGD sgd(1.0, optimizers::SGDOptions().clipvalue(0.5));
  sgd.apply_gradients({tensor({3.0f, -0.2f, -4.0f})}, {w});
  EXPECT_NEAR(values(w)[0], -0.5, 1e-6);
  EXPECT_NEAR(values(w)[1], 0.2, 1e-6);
  EXPECT_NEAR(values(w)[2], 0.5, 1e-6);
}

TEST(OptimizerClipping, GlobalClipnormScalesAllGradientsTogether) {
  // g1 = [3], g2 = [4]: global norm 5, clip 1 -> both scaled by 0.2: [0.6], [0.8].
  auto w1 = make_var("w1", {0.0f});
  auto w2 = make_var("w2", {0.0f});
  optimizers::SGD sgd(1.0, optimizers::SGDOptions().global_clipnorm(1.0));
  sgd.apply_gradients({Tensor::scalar(3.0f), Tensor::scalar(4.0f)}, {w1, w2});
  EXPECT_NEAR(w1->value().item<double>(), -0.6, 1e-6);
  EXPECT_NEAR(w2->value().item<double>(), -0.8, 1e-6);
  // Below the clip (global norm 0.5 < 1) nothing is scaled.
  sgd.apply_gradients({Tensor::scalar(0.3f), Tensor::scalar(0.4f)}, {w1, w2});
  EXPECT_NEAR(w1->value().item<double>(), -0.9, 1e-6);
  EXPECT_NEAR(w2->value().item<double>(), -1.2, 1e-6);
}

TEST(OptimizerClipping, ClippingFeedsTheRuleNotJustTheStep) {
  // Adam with clipvalue 0.1 sees g = 0.1 instead of 5: m = 0.01, v = 1e-5 after step 1, and the
  // step is still ~lr (Adam is scale-free on its first step).
  auto w = make_var("w", {1.0f});
  optimizers::Adam adam(0.1, optimizers::AdamOptions().clipvalue(0.1));
  adam.apply_gradients({Tensor::scalar(5.0f)}, {w});
  EXPECT_NEAR(adam.get_slot(w, "m")->value().item<double>(), 0.01, 1e-8);
  EXPECT_NEAR(adam.get_slot(w, "v")->value().item<double>(), 1e-5, 1e-9);  // float32 1 - beta_2
  EXPECT_NEAR(w->value().item<double>(), 0.9, 1e-5);
}

TEST(OptimizerClipping, OnlyOneClipOptionMayBeSet) {
  try {
    optimizers::SGD sgd(0.1, optimizers::SGDOptions().clipnorm(1.0).clipvalue(0.5));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("only one of clipnorm, clipvalue and global_clipnorm"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("clipnorm=1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("clipvalue=0.5"), std::string::npos) << msg;
  }
  EXPECT_THROW(optimizers::Adam(0.1, optimizers::AdamOptions().clipnorm(-1.0)), ValueError);
}

}  // namespace
}  // namespace strata
