#include <gtest/gtest.h>

#include <strata/strata.h>

#include "support/gradient_check.h"

namespace strata {
namespace {

TEST(Dense, BuildsLazilyWithKerasNamesAndShapes) {
  Dense d(3, DenseOptions().name("probe"));
  EXPECT_FALSE(d.built());
  EXPECT_TRUE(d.weights().empty());
  Tensor y = d(zeros({5, 4}));
  EXPECT_TRUE(d.built());
  EXPECT_EQ(y.shape(), Shape({5, 3}));
  ASSERT_EQ(d.weights().size(), 2u);
  EXPECT_EQ(d.weights()[0]->name(), "probe/kernel");
  EXPECT_EQ(d.weights()[0]->shape(), Shape({4, 3}));
  EXPECT_EQ(d.weights()[1]->name(), "probe/bias");
  EXPECT_EQ(d.weights()[1]->shape(), Shape({3}));
}

TEST(Dense, UniqueDefaultNames) {
  Dense a(1), b(1);
  EXPECT_NE(a.name(), b.name());
  EXPECT_EQ(b.name().rfind("dense", 0), 0u);
}

TEST(Dense, ForwardMatchesHandComputation) {
  Dense d(2, DenseOptions()
                 .activation("relu")
                 .kernel_initializer([](const Shape& s, DType t) {
                   return tensor({1.f, -1.f, 2.f, 0.5f}, {2, 2});
                 })
                 .bias_initializer(initializers::constant(0.5)));
  // [1, 2] @ [[1, -1], [2, 0.5]] + 0.5 = [5.5, 0.5]; [-1, -1] -> [-3+0.5, 0.5+0.5] -> relu
  Tensor y = d(tensor({1.f, 2.f, -1.f, -1.f}, {2, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{5.5f, 0.5f, 0.0f, 1.0f}));
}

TEST(Dense, GradientCheck) {
  set_random_seed(5);
  auto d = std::make_shared<Dense>(3, "tanh");
  Tensor x = random_normal({4, 5});
  d->operator()(x);  // build
  VariablePtr k = d->kernel(), b = d->bias();
  testing::expect_gradients_match(
      "dense",
      [&](const std::vector<Tensor>& in) {
        Tensor y = matmul(in[0], in[1]);
        return tanh(bias_add(y, in[2]));
      },
      {x, k->value().detach(), b->value().detach()}, {.epsilon = 1e-2, .rtol = 2e-2, .atol = 2e-3});
  // And through the layer itself: tape gradients for the layer's variables exist and match shape.
  GradientTape tape;
  Tensor loss = reduce_sum((*d)(x));
  auto grads = tape.gradient(loss, d->trainable_variables());
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].shape(), Shape({5, 3}));
  EXPECT_EQ(grads[1].shape(), Shape({3}));
}

TEST(Dense, BadInput) {
  EXPECT_THROW(Dense(0), ValueError);
  EXPECT_THROW(Dense(2, "nonsense"), ValueError);
  Dense d(2);
  EXPECT_THROW(d(zeros({3})), ShapeError);
  d(zeros({3, 4}));
  try {
    d(zeros({3, 5}));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[3,5]"), std::string::npos);
  }
}

TEST(Sequential, FreezingMakesWeightsNonTrainable) {
  Sequential m({std::make_shared<Dense>(2), std::make_shared<Dense>(1)});
  m(zeros({1, 3}));
  EXPECT_EQ(m.trainable_weights().size(), 4u);
  m.layers()[0]->set_trainable(false);
  EXPECT_EQ(m.trainable_weights().size(), 2u);
  EXPECT_EQ(m.non_trainable_weights().size(), 2u);
  EXPECT_THROW(Sequential()(zeros({1, 1})), ValueError);
}

}  // namespace
}  // namespace strata
