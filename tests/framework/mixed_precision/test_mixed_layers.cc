// Layers under "mixed_bfloat16" and "mixed_float16": outputs in 16 bits, variables float32 (read
// in 16 bits inside call() through a differentiable cast), gradients float32, BatchNormalization
// statistics float32, integer inputs never cast. Values are compared with float32 computations
// on the same (16-bit rounded) inputs.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using mixed_precision::PolicyScope;
using testing::expect_all_close;

// t rounded to `dtype` and back: what a 16-bit computation actually sees.
Tensor rounded(const Tensor& t, DType dtype) { return t.cast(dtype).cast(float32); }

class MixedLayers : public ::testing::TestWithParam<const char*> {
 protected:
  DType compute() const { return mixed_precision::DTypePolicy(GetParam()).compute_dtype(); }
  // bfloat16 keeps 8 significant bits, float16 11: tolerances for values of order 1-10.
  double tol() const { return compute() == bfloat16 ? 3e-2 : 5e-3; }
};

INSTANTIATE_TEST_SUITE_P(Policies, MixedLayers, ::testing::Values("mixed_bfloat16", "mixed_float16"),
                         [](const auto& info) { return std::string(info.param); });

TEST_P(MixedLayers, DenseComputesIn16BitsKeepsFloat32Weights) {
  PolicyScope policy(GetParam());
  set_random_seed(3);
  auto dense = std::make_shared<Dense>(4, DenseOptions().bias_initializer(initializers::constant(0.25)));
  const Tensor x = random_normal({6, 5});  // float32: the layer casts it
  Tensor y;
  std::vector<Tensor> grads;
  Tensor dx;
  const Tensor w = random_uniform({6, 4}, 0.5, 1.5, float32, 11);
  {
    GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    y = (*dense)(x, /*training=*/true);
    const Tensor loss = reduce_sum(y.cast(float32) * w);
    grads = tape.gradient(loss, dense->trainable_variables());
    dx = tape.gradient(loss, std::vector<Tensor>{x})[0];
  }
  EXPECT_EQ(y.dtype(), compute());
  EXPECT_EQ(dense->kernel()->dtype(), float32);
  EXPECT_EQ(dense->bias()->dtype(), float32);
  EXPECT_EQ(dense->kernel()->value().dtype(), float32);  // outside call(): as stored
  // Forward: the float32 product of the rounded operands, rounded.
  const Tensor k = rounded(dense->kernel()->value(), compute());
  const Tensor b = rounded(dense->bias()->value(), compute());
  expect_all_close(y.cast(float32), matmul(rounded(x, compute()), k) + b, tol(), tol());
  // Gradients reach the float32 variables (and the float32 input) as float32.
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].dtype(), float32);
  EXPECT_EQ(grads[1].dtype(), float32);
  EXPECT_EQ(dx.dtype(), float32);
  const Tensor wr = rounded(w, compute());
  expect_all_close(grads[0], matmul(rounded(x, compute()), wr, /*transpose_a=*/true), tol(), tol());
  expect_all_close(grads[1], reduce_sum(wr, {0}), tol(), tol());
  expect_all_close(dx, matmul(wr, k, false, /*transpose_b=*/true), tol(), tol());
}

TEST_P(MixedLayers, Conv2DComputesIn16BitsKeepsFloat32Weights) {
  PolicyScope policy(GetParam());
  set_random_seed(4);
  auto conv = std::make_shared<Conv2D>(3, 3, Conv2DOptions().padding("same"));
  const Tensor x = random_normal({2, 5, 5, 2});
  Tensor y;
  std::vector<Tensor> grads;
  const Tensor w = random_uniform({2, 5, 5, 3}, 0.5, 1.5, float32, 12);
  {
    GradientTape tape;
    y = (*conv)(x, /*training=*/true);
    grads = tape.gradient(reduce_sum(y.cast(float32) * w), conv->trainable_variables());
  }
  EXPECT_EQ(y.dtype(), compute());
  EXPECT_EQ(conv->kernel()->dtype(), float32);
  const Tensor k = rounded(conv->kernel()->value(), compute());
  const Tensor xr = rounded(x, compute());
  expect_all_close(y.cast(float32), conv2d(xr, k, {1, 1}, "same"), tol(), tol());
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].dtype(), float32);
  EXPECT_EQ(grads[0].shape(), conv->kernel()->shape());
  // The float32 reference gradient of the same loss.
  const Tensor kvar = k.detach();
  Tensor ref;
  {
    GradientTape tape;
    tape.watch(kvar);
    ref = tape.gradient(reduce_sum(conv2d(xr, kvar, {1, 1}, "same") * rounded(w, compute())),
                        std::vector<Tensor>{kvar})[0];
  }
  expect_all_close(grads[0], ref, 2 * tol(), 4 * tol());
  expect_all_close(grads[1], reduce_sum(rounded(w, compute()), {0, 1, 2}), tol(), tol());
}

TEST_P(MixedLayers, BatchNormalizationStatisticsStayFloat32) {
  PolicyScope policy(GetParam());
  set_random_seed(5);
  auto bn = std::make_shared<BatchNormalization>(BatchNormalizationOptions().momentum(0.5));
  // Channel means far from zero: the statistics must not be computed in 16 bits.
  const Tensor x = random_normal({8, 3, 3, 4}, 3.0, 2.0);
  Tensor y;
  std::vector<Tensor> grads;
  const Tensor w = random_uniform({8, 3, 3, 4}, 0.5, 1.5, float32, 13);
  {
    GradientTape tape;
    y = (*bn)(x, /*training=*/true);
    grads = tape.gradient(reduce_sum(y.cast(float32) * w), bn->trainable_variables());
  }
  EXPECT_EQ(y.dtype(), compute());
  for (const VariablePtr& v : bn->weights()) {
    EXPECT_EQ(v->dtype(), float32) << v->name();
    EXPECT_FALSE(v->autocast()) << v->name();
  }
  // moving = 0.5 * initial + 0.5 * batch statistic of the 16-bit input, kept in float32.
  const Tensor xr = rounded(x, compute());
  const Tensor mean = reduce_mean(xr, {0, 1, 2});
  const Tensor var = reduce_mean(square(xr - mean), {0, 1, 2});
  expect_all_close(bn->moving_mean()->value(), mean * 0.5, 1e-5, 1e-5);
  expect_all_close(bn->moving_variance()->value(), var * 0.5 + 0.5, 1e-4, 1e-5);
  // y is the float32 normalisation, rounded.
  const Tensor ref = (xr - mean) * rsqrt(var + 1e-3);
  expect_all_close(y.cast(float32), ref, tol(), tol());
  ASSERT_EQ(grads.size(), 2u);  // gamma, beta
  EXPECT_EQ(grads[0].dtype(), float32);
  EXPECT_EQ(grads[1].dtype(), float32);
  expect_all_close(grads[1], reduce_sum(rounded(w, compute()), {0, 1, 2}), tol(), tol());
  expect_all_close(grads[0], reduce_sum(rounded(w, compute()) * ref, {0, 1, 2}), 2 * tol(),
                   4 * tol());

  // Inference: the moving statistics, 16-bit output, float32 gradients for gamma and beta and a
  // float32 gradient for the float32 input.
  const Tensor xi = x.detach();
  GradientTape tape(/*persistent=*/true);
  tape.watch(xi);
  const Tensor yi = (*bn)(xi, /*training=*/false);
  EXPECT_EQ(yi.dtype(), compute());
  const Tensor loss = reduce_sum(yi.cast(float32));
  const std::vector<Tensor> gi = tape.gradient(loss, bn->trainable_variables());
  const Tensor dxi = tape.gradient(loss, std::vector<Tensor>{xi})[0];
  EXPECT_EQ(gi[0].dtype(), float32);
  EXPECT_EQ(gi[1].dtype(), float32);
  EXPECT_EQ(dxi.dtype(), float32);
  const Tensor inv = rsqrt(bn->moving_variance()->value() + 1e-3);
  expect_all_close(gi[1], full({4}, 72.0), 1e-6, 1e-6);  // dbeta = sum of ones over 8*3*3
  expect_all_close(gi[0], reduce_sum((xr - bn->moving_mean()->value()) * inv, {0, 1, 2}), tol(),
                   8 * tol());
  // dx = dy * gamma * inv with gamma = 1, rounded to 16 bits.
  expect_all_close(dxi, broadcast_to(rounded(inv, compute()), x.shape()), tol(), tol());
}

TEST_P(MixedLayers, LayerNormalizationNormalisesInFloat32) {
  PolicyScope policy(GetParam());
  auto ln = std::make_shared<LayerNormalization>();
  const Tensor x = random_normal({4, 6}, 50.0, 3.0, float32, 21);  // large mean, small spread
  const Tensor y = (*ln)(x, true);
  EXPECT_EQ(y.dtype(), compute());
  EXPECT_EQ(ln->weights()[0]->dtype(), float32);
  const Tensor xr = rounded(x, compute());
  const Tensor m = reduce_mean(xr, {1}, true);
  const Tensor ref = (xr - m) * rsqrt(reduce_mean(square(xr - m), {1}, true) + 1e-3);
  expect_all_close(y.cast(float32), ref, tol(), tol());
}

TEST_P(MixedLayers, EmbeddingTakesIntegerIdsAsTheyAre) {
  PolicyScope policy(GetParam());
  auto emb = std::make_shared<Embedding>(10, 3);
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{1, 7, 7, 0}, Shape{2, 2});
  const Tensor y = (*emb)(ids);
  EXPECT_EQ(y.dtype(), compute());
  EXPECT_EQ(y.shape(), Shape({2, 2, 3}));
  EXPECT_EQ(emb->weights()[0]->dtype(), float32);
  const Tensor table = rounded(emb->weights()[0]->value(), compute());
  expect_all_close(y.cast(float32)[0][1], table[7], 0, 0);
}

TEST_P(MixedLayers, PreprocessingOutputsInTheComputeDtype) {
  PolicyScope policy(GetParam());
  // uint8 pixels stay integers until Rescaling (computed in float32, returned in 16 bits).
  Rescaling rescale(1.0 / 255);
  const Tensor pixels = Tensor::from_vector(std::vector<uint8_t>{0, 51, 255}, Shape{1, 3});
  const Tensor y = rescale(pixels);
  EXPECT_EQ(y.dtype(), compute());
  expect_all_close(y.cast(float32), tensor({0.f, 0.2f, 1.f}, {1, 3}), tol(), 1e-3);
  // Floating inputs are cast like any layer's (Keras); the statistics stay float32.
  Normalization norm(NormalizationOptions().mean(10.0).variance(4.0));
  const Tensor z = norm(tensor({12.f, 8.f}, {2, 1}));
  EXPECT_EQ(z.dtype(), compute());
  expect_all_close(z.cast(float32), tensor({1.f, -1.f}, {2, 1}), 0, 0);
}

// Records the dtypes it sees inside call(): its input, and its weights read there.
class Probe : public Layer {
 public:
  Probe() : Layer("probe") {}
  std::string class_name() const override { return "Probe"; }
  DType input_dtype = bool_, weight_dtype = bool_, fixed_dtype = bool_, count_dtype = bool_;
  VariablePtr w, fixed, count;

 protected:
  void build(const Shape& s) override {
    w = add_weight("w", Shape{s[s.rank() - 1]}, {.initializer = initializers::ones()});
    fixed = add_weight("fixed", Shape{}, {.initializer = initializers::ones(), .autocast = false});
    count = add_weight("count", Shape{},
                       {.initializer = initializers::zeros(), .dtype = int64, .trainable = false});
  }
  Tensor call(const Tensor& x, bool) override {
    input_dtype = x.dtype();
    const Tensor wv = w->value();
    weight_dtype = wv.dtype();
    fixed_dtype = fixed->value().dtype();
    count_dtype = count->value().dtype();
    return is_floating(x.dtype()) ? x * wv : cast(x, wv.dtype()) * wv;
  }
};

TEST_P(MixedLayers, VariablesAreReadInTheComputeDtypeOnlyInsideCall) {
  PolicyScope policy(GetParam());
  auto probe = std::make_shared<Probe>();
  Tensor grad;
  {
    GradientTape tape;
    const Tensor y = (*probe)(full({2, 3}, 2.0));
    grad = tape.gradient(reduce_sum(y.cast(float32)), probe->trainable_variables())[0];
  }
  EXPECT_EQ(probe->input_dtype, compute());
  EXPECT_EQ(probe->weight_dtype, compute());
  EXPECT_EQ(probe->fixed_dtype, float32);  // autocast = false
  EXPECT_EQ(probe->count_dtype, int64);    // never cast
  EXPECT_EQ(probe->w->value().dtype(), float32);
  EXPECT_EQ(mixed_precision::autocast_dtype(), std::nullopt);  // the scope closed
  // The cast is differentiable: d/dw sum(2 * w) = 2 per element, in float32.
  EXPECT_EQ(grad.dtype(), float32);
  EXPECT_EQ(grad.to_vector<float>(), (std::vector<float>{4.f, 4.f, 4.f}));
  // Integer inputs are not cast.
  (*probe)(Tensor::from_vector(std::vector<int32_t>{1, 2, 3}, Shape{1, 3}));
  EXPECT_EQ(probe->input_dtype, int32);
}

// A mixed subclassed model holding one float32 layer (Keras' advice for a numerically sensitive
// layer): the float32 layer gets float32 inputs and reads float32 weights inside the model's call.
class MixedWithFloat32Head : public Model {
 public:
  MixedWithFloat32Head() : Model("mixed_with_head") {
    body = track(std::make_shared<Probe>());
    head = track(std::make_shared<Probe>());
    head->set_dtype_policy("float32");
  }
  std::shared_ptr<Probe> body, head;

 protected:
  Tensor call(const Tensor& x, bool training) override {
    return (*head)((*body)(x, training), training);
  }
};

TEST_P(MixedLayers, Float32LayerInsideAMixedModelStaysFloat32) {
  PolicyScope policy(GetParam());
  MixedWithFloat32Head model;
  const Tensor y = model(ones({2, 3}));
  EXPECT_EQ(model.body->input_dtype, compute());
  EXPECT_EQ(model.body->weight_dtype, compute());
  EXPECT_EQ(model.head->input_dtype, float32);
  EXPECT_EQ(model.head->weight_dtype, float32);
  EXPECT_EQ(y.dtype(), float32);
}

TEST_P(MixedLayers, SequentialCastsPerLayerAndLossesAreFloat32) {
  PolicyScope policy(GetParam());
  set_random_seed(6);
  auto softmax = std::make_shared<ActivationLayer>("softmax");
  softmax->set_dtype_policy("float32");  // Keras' advice: the output layer in float32
  Sequential model({std::make_shared<Dense>(8, "relu"), std::make_shared<Dense>(3), softmax});
  const Tensor x = random_normal({5, 4});
  const Tensor probs = model(x);
  EXPECT_EQ(probs.dtype(), float32);
  EXPECT_EQ(model.layers()[1]->compute_dtype(), compute());
  // A Loss object takes 16-bit predictions to float32 (Keras' Loss dtype).
  const Tensor logits = (*model.layers()[1])((*model.layers()[0])(x));
  EXPECT_EQ(logits.dtype(), compute());
  const Tensor labels = Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 1, 0});
  const Tensor loss = losses::SparseCategoricalCrossentropy(true)(labels, logits);
  EXPECT_EQ(loss.dtype(), float32);
  EXPECT_NEAR(loss.item<double>(),
              losses::SparseCategoricalCrossentropy(true)(labels, logits.cast(float32)).item<double>(),
              1e-6);
  const Tensor mse = losses::MeanSquaredError()(random_normal({5, 3}).cast(compute()), logits);
  EXPECT_EQ(mse.dtype(), float32);
}

}  // namespace
}  // namespace strata
