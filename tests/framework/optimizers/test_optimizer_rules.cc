// The update rules against values worked out by hand (in double precision, from Keras's
// formulas, shown in the comments). Every test starts from w = 1 unless it says otherwise.
#include <gtest/gtest.h>

#include "optimizer_test_util.h"

namespace strata {
namespace {

using testing::make_var;
using testing::run_steps;

constexpr double kTol = 2e-6;  // float32 arithmetic on values of order 1

TEST(OptimizerRules, SgdPlain) {
  // w -= lr * g: 1 - 0.1 * 0.5 = 0.95, then 0.95 - 0.1 * (-1) = 1.05.
  auto w = make_var("w", {1.0f});
  optimizers::SGD sgd(0.1);
  const auto steps = run_steps(sgd, w, {{0.5f}, {-1.0f}});
  EXPECT_NEAR(steps[0][0], 0.95, kTol);
  EXPECT_NEAR(steps[1][0], 1.05, kTol);
  EXPECT_EQ(sgd.variables().size(), 1u);  // iterations only: plain SGD has no slots
}

TEST(OptimizerRules, SgdMomentum) {
  // v = 0.9 v - 0.1 g; w += v. g = 0.5 twice:
  //   v1 = -0.05,                  w1 = 0.95
  //   v2 = 0.9(-0.05) - 0.05 = -0.095, w2 = 0.855
  auto w = make_var("w", {1.0f});
  optimizers::SGD sgd(0.1, /*momentum=*/0.9);
  const auto steps = run_steps(sgd, w, {{0.5f}, {0.5f}});
  EXPECT_NEAR(steps[0][0], 0.95, kTol);
  EXPECT_NEAR(steps[1][0], 0.855, kTol);
  EXPECT_NEAR(sgd.get_slot(w, "momentum")->value().item<double>(), -0.095, kTol);
}

TEST(OptimizerRules, SgdNesterov) {
  // v = 0.9 v - 0.1 g; w += 0.9 v - 0.1 g. g = 0.5 twice:
  //   v1 = -0.05,  w1 = 1 + (-0.045 - 0.05) = 0.905
  //   v2 = -0.095, w2 = 0.905 + (-0.0855 - 0.05) = 0.7695
  auto w = make_var("w", {1.0f});
  optimizers::SGD sgd(0.1, optimizers::SGDOptions().momentum(0.9).nesterov(true));
  const auto steps = run_steps(sgd, w, {{0.5f}, {0.5f}});
  EXPECT_NEAR(steps[0][0], 0.905, kTol);
  EXPECT_NEAR(steps[1][0], 0.7695, kTol);
}

TEST(OptimizerRules, AdamFirstTwoSteps) {
  // lr 0.1, b1 0.9, b2 0.999, eps 1e-7; g1 = 0.5, g2 = -0.25.
  // Step 1: m = 0.05, v = 0.00025, alpha = 0.1 sqrt(0.001) / 0.1 = 0.0316228
  //         w = 1 - 0.0316228 * 0.05 / (0.0158114 + 1e-7) = 0.90000063
  // Step 2: m = 0.045 - 0.025 = 0.02, v = 0.00024975 + 0.0000625 = 0.00031225,
  //         alpha = 0.1 sqrt(1 - 0.999^2) / (1 - 0.81) = 0.0235317
  //         w = 0.90000063 - 0.0235317 * 0.02 / (0.0176707 + 1e-7) = 0.87336708
  auto w = make_var("w", {1.0f});
  optimizers::Adam adam(0.1);
  const auto steps = run_steps(adam, w, {{0.5f}, {-0.25f}});
  EXPECT_NEAR(steps[0][0], 0.9000006324515321, kTol);
  EXPECT_NEAR(steps[1][0], 0.8733670792079219, kTol);
  // float32 slots: 1 - beta_2 is computed from beta_2 rounded to float, 0.00099998713, so v is
  // off by ~1e-5 relative (Keras rounds 1 - 0.999 instead; the variable moves the same to 1e-6).
  EXPECT_NEAR(adam.get_slot(w, "m")->value().item<double>(), 0.02, 1e-7);
  EXPECT_NEAR(adam.get_slot(w, "v")->value().item<double>(), 0.00031225, 0.00031225 * 5e-5);
  EXPECT_EQ(adam.iteration_count(), 2);
}

TEST(OptimizerRules, AdamAmsgradUsesTheLargestSecondMoment) {
  // beta_2 = 0.5 makes v shrink quickly: g1 = 0.5, g2 = 0.1, lr 0.1, b1 0.9.
  // Step 1: m = 0.05, v = vhat = 0.125, alpha = 0.1 sqrt(0.5) / 0.1 = 0.70711
  //         w = 1 - 0.70711 * 0.05 / sqrt(0.125) = 0.90000003
  // Step 2: m = 0.055, v = 0.0675, vhat = max(0.125, 0.0675) = 0.125,
  //         alpha = 0.1 sqrt(0.75) / 0.19 = 0.45580
  //   amsgrad: w = 0.90000003 - 0.4558 * 0.055 / sqrt(0.125)  = 0.82909377
  //   plain:   w = 0.90000003 - 0.4558 * 0.055 / sqrt(0.0675) = 0.80350884
  auto w1 = make_var("w1", {1.0f});
  auto w2 = make_var("w2", {1.0f});
  optimizers::Adam ams(0.1, optimizers::AdamOptions().beta_2(0.5).amsgrad(true));
  optimizers::Adam plain(0.1, optimizers::AdamOptions().beta_2(0.5));
  const auto a = run_steps(ams, w1, {{0.5f}, {0.1f}});
  const auto p = run_steps(plain, w2, {{0.5f}, {0.1f}});
  EXPECT_NEAR(a[0][0], 0.9000000282842633, kTol);
  EXPECT_NEAR(a[1][0], 0.8290937663116487, kTol);
  EXPECT_NEAR(p[1][0], 0.8035088373535646, kTol);
  EXPECT_NEAR(ams.get_slot(w1, "vhat")->value().item<double>(), 0.125, 1e-7);
}

TEST(OptimizerRules, AdamKerasDefaultsAreTheAdamDefaults) {
  // Adam(0.1) with default arguments, step 1 on the elements g = [0.5, -2, 0]: the first Adam
  // step is lr * g / (|g| + eps / sqrt(1 - b2)) ~= lr * sign(g); a zero gradient moves nothing.
  auto w = make_var("w", {1.0f, 1.0f, 1.0f});
  optimizers::Adam adam(0.1, 0.9, 0.999, 1e-7, false);
  run_steps(adam, w, {{0.5f, -2.0f, 0.0f}});
  const auto v = w->value().to_vector<float>();
  EXPECT_NEAR(v[0], 0.9000006324515321, kTol);
  EXPECT_NEAR(v[1], 1.1 - 1.58e-7, kTol);
  EXPECT_FLOAT_EQ(v[2], 1.0f);
}

TEST(OptimizerRules, AdamWDecaysBeforeTheAdamStep) {
  // lr 0.1, weight_decay 0.1: w = 1 - 0.1 * 0.1 * 1 = 0.99, then the Adam step of
  // AdamFirstTwoSteps (-0.09999937): 0.89000063. Step 2: 0.89000063 * 0.99 - 0.02663355
  // = 0.85446707.
  auto w = make_var("w", {1.0f});
  optimizers::AdamW adamw(0.1, /*weight_decay=*/0.1);
  const auto steps = run_steps(adamw, w, {{0.5f}, {-0.25f}});
  EXPECT_NEAR(steps[0][0], 0.890000632451532, kTol);
  EXPECT_NEAR(steps[1][0], 0.8544670728834065, kTol);
  EXPECT_EQ(adamw.name(), "AdamW");
  EXPECT_DOUBLE_EQ(optimizers::AdamW().weight_decay(), 0.004);
}

TEST(OptimizerRules, WeightDecayOnOtherOptimizersIsDecoupled) {
  // SGD(lr 0.1, weight_decay 0.5): w = 2 - 0.1 * 0.5 * 2 = 1.9, then - 0.1 * 1 = 1.8.
  auto w = make_var("w", {2.0f});
  auto bias = make_var("dense/bias", {2.0f});
  optimizers::SGD sgd(0.1, optimizers::SGDOptions().weight_decay(0.5));
  sgd.exclude_from_weight_decay({"bias"});
  sgd.apply_gradients({Tensor::scalar(1.0f), Tensor::scalar(1.0f)}, {w, bias});
  EXPECT_NEAR(w->value().item<double>(), 1.8, kTol);
  EXPECT_NEAR(bias->value().item<double>(), 1.9, kTol);  // excluded: only the gradient step
}

TEST(OptimizerRules, RmspropPlain) {
  // rms = 0.1 g^2; w -= 0.01 g / sqrt(rms + 1e-7). g = 0.5 twice:
  //   rms1 = 0.025,  w1 = 1 - 0.005 / 0.1581142 = 0.96837729
  //   rms2 = 0.0475, w2 = 0.96837729 - 0.005 / 0.2179451 = 0.94543574
  auto w = make_var("w", {1.0f});
  optimizers::RMSprop rms(0.01);
  const auto steps = run_steps(rms, w, {{0.5f}, {0.5f}});
  EXPECT_NEAR(steps[0][0], 0.9683772866436797, kTol);
  EXPECT_NEAR(steps[1][0], 0.94543573740561, kTol);
}

TEST(OptimizerRules, RmspropCenteredWithMomentum) {
  // lr 0.01, rho 0.9, momentum 0.5, centered; g = 0.5 twice.
  // Step 1: rms = 0.025, mg = 0.05, denom = 0.025 - 0.0025 + 1e-7 = 0.0225001,
  //         inc = 0.005 / 0.1500003 = 0.0333333, mom = 0.0333333, w = 0.96666674
  // Step 2: rms = 0.0475, mg = 0.095, denom = 0.0475 - 0.009025 + 1e-7 = 0.0384751,
  //         inc = 0.005 / 0.1961507 = 0.0254905, mom = 0.0166667 + 0.0254905 = 0.0421572,
  //         w = 0.92450951
  auto w = make_var("w", {1.0f});
  optimizers::RMSprop rms(0.01, /*rho=*/0.9, /*momentum=*/0.5, /*epsilon=*/1e-7,
                          /*centered=*/true);
  const auto steps = run_steps(rms, w, {{0.5f}, {0.5f}});
  EXPECT_NEAR(steps[0][0], 0.9666667407404939, kTol);
  EXPECT_NEAR(steps[1][0], 0.9245095071401812, kTol);
  EXPECT_NEAR(rms.get_slot(w, "mg")->value().item<double>(), 0.095, 1e-7);
}

TEST(OptimizerRules, Adagrad) {
  // lr 0.1, accumulator starts at 0.1; g = 0.5 twice:
  //   acc1 = 0.35, w1 = 1 - 0.05 / sqrt(0.3500001) = 0.91548459
  //   acc2 = 0.6,  w2 = 0.91548459 - 0.05 / sqrt(0.6000001) = 0.85093487
  auto w = make_var("w", {1.0f});
  optimizers::Adagrad adagrad(0.1);
  const auto steps = run_steps(adagrad, w, {{0.5f}, {0.5f}});
  EXPECT_NEAR(steps[0][0], 0.9154845866007779, kTol);
  EXPECT_NEAR(steps[1][0], 0.8509348695431305, kTol);
  EXPECT_NEAR(adagrad.get_slot(w, "accumulator")->value().item<double>(), 0.6, 1e-7);
}

TEST(OptimizerRules, LargeVariableUsesEveryThreadChunkIdentically) {
  // 100k elements cross the kernel's parallel grain: every element must get the same update.
  const int64_t n = 100000;
  auto w = make_var("big", std::vector<float>(size_t(n), 1.0f));
  optimizers::Adam adam(0.1);
  adam.apply_gradients({full({n}, 0.5)}, {w});
  adam.apply_gradients({full({n}, -0.25)}, {w});
  const auto v = w->value().to_vector<float>();
  for (int64_t i = 0; i < n; i += 9973) EXPECT_NEAR(v[size_t(i)], 0.8733670792079219, kTol) << i;
  EXPECT_EQ(v.front(), v.back());
}

}  // namespace
}  // namespace strata
