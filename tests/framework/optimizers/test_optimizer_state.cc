// Optimizer state: iterations, lazily created slot variables (through the creator stack, with
// Keras 2 names), variables(), the learning rate, the factory and argument errors.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "optimizer_test_util.h"

namespace strata {
namespace {

using testing::make_var;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no exception>";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(OptimizerState, SlotsGoThroughTheVariableCreatorWithKerasNames) {
  std::vector<VariableSpec> seen;
  VariableCreatorScope scope([&](const VariableSpec& spec, const NextCreator& next) {
    seen.push_back(spec);
    return next(spec);
  });
  auto kernel = make_var("dense/kernel", {1, 2, 3, 4, 5, 6}, Shape{2, 3});
  auto bias = make_var("dense/bias", {0, 0, 0});
  seen.clear();  // only the optimizer's variables from here on

  optimizers::Adam adam(1e-3, optimizers::AdamOptions().amsgrad(true));
  ASSERT_EQ(seen.size(), 1u);  // iterations, made by the constructor
  EXPECT_EQ(seen[0].name, "Adam/iter");
  EXPECT_EQ(seen[0].dtype, DType::kInt64);
  EXPECT_FALSE(seen[0].trainable);
  EXPECT_EQ(seen[0].aggregation, VariableAggregation::kOnlyFirstReplica);

  const Tensor gk = ones({2, 3}), gb = ones({3});
  adam.apply_gradients({gk, gb}, {kernel, bias});
  const std::vector<std::string> expected = {
      "Adam/iter",          "Adam/dense/kernel/m", "Adam/dense/kernel/v", "Adam/dense/kernel/vhat",
      "Adam/dense/bias/m", "Adam/dense/bias/v",   "Adam/dense/bias/vhat"};
  ASSERT_EQ(seen.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(seen[i].name, expected[i]);
  EXPECT_EQ(seen[1].shape, (Shape{2, 3}));
  EXPECT_EQ(seen[1].dtype, DType::kFloat32);
  EXPECT_FALSE(seen[1].trainable);

  // variables(): iterations then the slots, in creation order; a second step makes none.
  adam.apply_gradients({gk, gb}, {kernel, bias});
  EXPECT_EQ(seen.size(), expected.size());
  const auto vars = adam.variables();
  ASSERT_EQ(vars.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(vars[i]->name(), expected[i]);
  EXPECT_EQ(adam.iteration_count(), 2);
  EXPECT_EQ(adam.iterations()->value().item<int64_t>(), 2);
}

TEST(OptimizerState, SlotNamesPerOptimizer) {
  auto w = make_var("w", {1.0f});
  const auto names = [&](optimizers::Optimizer& opt) {
    opt.build({w});
    std::vector<std::string> out;
    for (const auto& v : opt.variables()) out.push_back(v->name());
    return out;
  };
  optimizers::SGD sgd(0.1, 0.9);
  EXPECT_EQ(names(sgd), (std::vector<std::string>{"SGD/iter", "SGD/w/momentum"}));
  optimizers::RMSprop rms(0.1, 0.9, 0.5, 1e-7, true);
  EXPECT_EQ(names(rms),
            (std::vector<std::string>{"RMSprop/iter", "RMSprop/w/rms", "RMSprop/w/mg",
                                      "RMSprop/w/momentum"}));
  optimizers::Adagrad adagrad(0.1, optimizers::AdagradOptions().name("ada"));
  EXPECT_EQ(names(adagrad), (std::vector<std::string>{"ada/iter", "ada/w/accumulator"}));
  EXPECT_NEAR(adagrad.get_slot(w, "accumulator")->value().item<double>(), 0.1, 1e-7);
}

TEST(OptimizerState, UndefinedGradientsAreSkipped) {
  auto a = make_var("a", {1.0f});
  auto b = make_var("b", {1.0f});
  optimizers::SGD sgd(0.5);
  sgd.apply_gradients({Tensor(), Tensor::scalar(1.0f)}, {a, b});
  EXPECT_FLOAT_EQ(a->value().item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(b->value().item<float>(), 0.5f);
  const std::string msg = message_of([&] { sgd.apply_gradients({Tensor(), Tensor()}, {a, b}); });
  EXPECT_TRUE(contains(msg, "no gradients provided for any variable")) << msg;
  EXPECT_TRUE(contains(msg, "'a', 'b'")) << msg;
  EXPECT_EQ(sgd.iteration_count(), 1);
}

TEST(OptimizerState, GradientShapeAndDtypeErrorsNameTheVariable) {
  auto kernel = make_var("dense/kernel", {1, 2, 3, 4}, Shape{2, 2});
  optimizers::Adam adam;
  try {
    adam.apply_gradients({ones({4})}, {kernel});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "dense/kernel")) << msg;
    EXPECT_TRUE(contains(msg, "[4]")) << msg;
    EXPECT_TRUE(contains(msg, "[2,2]")) << msg;
  }
  EXPECT_THROW(adam.apply_gradients({ones({2, 2}, float64)}, {kernel}), DTypeError);
  const std::string msg = message_of([&] { adam.apply_gradients({ones({2, 2})}, {kernel, kernel}); });
  EXPECT_TRUE(contains(msg, "1 gradients for 2 variables")) << msg;
  EXPECT_EQ(adam.iteration_count(), 0);  // nothing was applied
}

TEST(OptimizerState, Float64VariablesAreRejectedByTheCpuKernel) {
  VariableSpec spec;
  spec.name = "w64";
  spec.shape = Shape{2};
  spec.dtype = DType::kFloat64;
  auto w = create_variable(spec);
  optimizers::SGD sgd(0.1);
  const std::string msg = message_of([&] { sgd.apply_gradients({ones({2}, float64)}, {w}); });
  EXPECT_TRUE(contains(msg, "float32 only")) << msg;
  EXPECT_TRUE(contains(msg, "float64")) << msg;
}

TEST(OptimizerState, HyperParameterValidation) {
  EXPECT_TRUE(contains(message_of([] { optimizers::Adam(0.1, 1.0); }), "beta_1 must be in [0, 1)"));
  EXPECT_TRUE(contains(message_of([] { optimizers::Adam(0.1, 0.9, -0.5); }), "beta_2"));
  EXPECT_TRUE(contains(message_of([] { optimizers::SGD(0.1, 1.5); }), "momentum must be in [0, 1]"));
  EXPECT_TRUE(contains(message_of([] { optimizers::RMSprop(0.1, 1.0); }), "rho"));
  EXPECT_TRUE(contains(message_of([] { optimizers::Adagrad(0.1, -1.0); }),
                       "initial_accumulator_value"));
  const std::string lr = message_of([] { optimizers::SGD(-0.1); });
  EXPECT_TRUE(contains(lr, "learning_rate")) << lr;
  EXPECT_TRUE(contains(lr, "-0.1")) << lr;
  EXPECT_THROW(optimizers::Adam(0.1, optimizers::AdamOptions().epsilon(-1)), ValueError);
  EXPECT_THROW(optimizers::SGD(0.1, optimizers::SGDOptions().weight_decay(-1)), ValueError);
}

TEST(OptimizerState, FactoryUsesKerasNames) {
  EXPECT_EQ(optimizers::get("adam")->name(), "Adam");
  EXPECT_EQ(optimizers::get("Adam")->name(), "Adam");
  EXPECT_EQ(optimizers::get("sgd")->name(), "SGD");
  EXPECT_EQ(optimizers::get("adamw")->name(), "AdamW");
  EXPECT_EQ(optimizers::get("rmsprop")->name(), "RMSprop");
  EXPECT_EQ(optimizers::get("adagrad")->name(), "Adagrad");
  EXPECT_NEAR(optimizers::get("sgd")->learning_rate(), 0.01, 1e-12);
  EXPECT_NEAR(optimizers::get("adam")->learning_rate(), 0.001, 1e-12);
  const std::string msg = message_of([] { optimizers::get("adamax"); });
  EXPECT_TRUE(contains(msg, "'adamax'")) << msg;
  EXPECT_TRUE(contains(msg, "adagrad, adam, adamw, rmsprop, sgd")) << msg;
}

TEST(OptimizerState, ScheduleDrivesTheLearningRate) {
  // lr 1.0 for steps 0 and 1 (step <= boundary 1), then 0.1. SGD, w = 0, g = 1:
  //   w: -1, -2, -2.1, -2.2
  auto w = make_var("w", {0.0f});
  auto schedule = std::make_shared<optimizers::PiecewiseConstantDecay>(
      std::vector<int64_t>{1}, std::vector<double>{1.0, 0.1});
  optimizers::SGD sgd(schedule);
  EXPECT_DOUBLE_EQ(sgd.learning_rate(), 1.0);
  const auto steps = testing::run_steps(sgd, w, {{1.0f}, {1.0f}, {1.0f}, {1.0f}});
  EXPECT_NEAR(steps[0][0], -1.0, 1e-6);
  EXPECT_NEAR(steps[1][0], -2.0, 1e-6);
  EXPECT_NEAR(steps[2][0], -2.1, 1e-6);
  EXPECT_NEAR(steps[3][0], -2.2, 1e-6);
  EXPECT_DOUBLE_EQ(sgd.learning_rate(), 0.1);
  EXPECT_EQ(sgd.learning_rate_schedule(), schedule);
  // As in Keras, a constant cannot replace a schedule, but another schedule can.
  const std::string msg = message_of([&] { sgd.set_learning_rate(0.5); });
  EXPECT_TRUE(contains(msg, "PiecewiseConstantDecay")) << msg;
  sgd.set_learning_rate(std::make_shared<optimizers::ExponentialDecay>(0.5, 10, 1.0));
  EXPECT_DOUBLE_EQ(sgd.learning_rate(), 0.5);
}

TEST(OptimizerState, SetLearningRate) {
  auto w = make_var("w", {0.0f});
  optimizers::SGD sgd(1.0);
  sgd.set_learning_rate(0.25);
  EXPECT_DOUBLE_EQ(sgd.learning_rate(), 0.25);
  sgd.apply_gradients({Tensor::scalar(1.0f)}, {w});
  EXPECT_FLOAT_EQ(w->value().item<float>(), -0.25f);
  EXPECT_THROW(sgd.set_learning_rate(-1.0), ValueError);
}

TEST(OptimizerState, PairsOverload) {
  auto w = make_var("w", {1.0f});
  optimizers::SGD sgd(0.5);
  sgd.apply_gradients({{Tensor::scalar(1.0f), w}});
  EXPECT_FLOAT_EQ(w->value().item<float>(), 0.5f);
}

}  // namespace
}  // namespace strata
