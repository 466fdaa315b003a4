// Whole models under mixed precision on the CPU: a classifier learns under "mixed_bfloat16" and
// under "mixed_float16" (whose compile() wraps the optimizer in a LossScaleOptimizer and whose
// train_step scales the loss), a conv + batch-norm model with a fused ReLU trains, and a mixed
// model with its loss-scale state survives a save / load and a training checkpoint.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "framework/saving/training_checkpoint.h"
#include "layers/load_model.h"
#include "layers/model_serialization.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

using mixed_precision::PolicyScope;
using optimizers::LossScaleOptimizer;

// Three Gaussian blobs in 2-D, one per class (chance accuracy is 1/3).
void make_blobs(int64_t n, Tensor& x, Tensor& y) {
  const Tensor noise = random_normal({n, 2}, 0.0, 0.4, float32, 17);
  std::vector<int64_t> labels(static_cast<size_t>(n));
  std::vector<float> centres(static_cast<size_t>(n) * 2);
  for (int64_t i = 0; i < n; ++i) {
    labels[size_t(i)] = i % 3;
    centres[size_t(2 * i)] = float(i % 3) * 2.0f - 2.0f;
    centres[size_t(2 * i + 1)] = (i % 3 == 1) ? 1.5f : -0.5f;
  }
  x = Tensor::from_vector(centres, {n, 2}) + noise;
  y = Tensor::from_vector(labels);
}

std::shared_ptr<Sequential> mlp() {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(16, "relu"), std::make_shared<Dense>(3)});
}

class MixedTraining : public ::testing::TestWithParam<const char*> {
 protected:
  bool float16() const { return std::string(GetParam()) == "mixed_float16"; }
  DType compute() const { return float16() ? DType::kFloat16 : DType::kBFloat16; }
};

INSTANTIATE_TEST_SUITE_P(Policies, MixedTraining, ::testing::Values("mixed_bfloat16", "mixed_float16"),
                         [](const auto& info) { return std::string(info.param); });

TEST_P(MixedTraining, ClassifierLearns) {
  PolicyScope policy(GetParam());
  set_random_seed(1);
  Tensor x, y;
  make_blobs(480, x, y);
  auto model = mlp();
  model->compile(std::make_shared<optimizers::Adam>(0.01),
                 std::make_shared<losses::SparseCategoricalCrossentropy>(true), {"accuracy"});
  // Keras 3: a mixed_float16 model's optimizer is wrapped; a bfloat16 one needs no loss scaling.
  auto lso = std::dynamic_pointer_cast<LossScaleOptimizer>(model->optimizer());
  ASSERT_EQ(lso != nullptr, float16());
  if (lso) {
    EXPECT_EQ(lso->name(), "loss_scale_optimizer");
    EXPECT_EQ(lso->inner_optimizer()->class_name(), "Adam");
  }
  const History h = model->fit(x, y, FitOptions().epochs(12).batch_size(32).verbose(0));
  const std::vector<double>& loss = h.history.at("loss");
  const std::vector<double>& acc = h.history.at("accuracy");
  ASSERT_EQ(loss.size(), 12u);
  EXPECT_LT(loss.back(), 0.4 * loss.front()) << "loss " << loss.front() << " -> " << loss.back();
  EXPECT_GT(acc.back(), 0.85);  // chance is 1/3
  for (const VariablePtr& w : model->weights()) EXPECT_EQ(w->dtype(), float32) << w->name();
  EXPECT_EQ(model->predict(x).dtype(), compute());
  const auto scores = model->evaluate(x, y, EvaluateOptions().verbose(0));
  EXPECT_GT(scores.at("accuracy"), 0.85);
  if (lso) {
    // 15 steps per epoch; skipped steps (float16 overflow at the start) do not count.
    const int64_t steps = lso->iteration_count();
    EXPECT_GT(steps, 12 * 15 - 20);
    EXPECT_LE(steps, 12 * 15);
    EXPECT_EQ(steps, lso->inner_optimizer()->iteration_count());
    EXPECT_GT(lso->loss_scale(), 0.0);
    EXPECT_TRUE(std::isfinite(lso->loss_scale()));
  }
}

TEST_P(MixedTraining, ConvBatchNormModelWithFusedReLUTrains) {
  PolicyScope policy(GetParam());
  set_random_seed(2);
  const testing::ClassifierData d = testing::classifier_data(192, 5);
  auto in = Input({6, 6, 1});
  auto h = (*std::make_shared<Conv2D>(8, 3))(in);
  auto bn = std::make_shared<BatchNormalization>();
  h = (*bn)(h);
  h = (*std::make_shared<ReLU>())(h);  // folded into the batch norm (fused kernel)
  h = (*std::make_shared<Flatten>())(h);
  auto out = (*std::make_shared<Dense>(3))(h);
  Model model(in, out);
  model.compile(std::make_shared<optimizers::Adam>(0.01),
                std::make_shared<losses::SparseCategoricalCrossentropy>(true), {"accuracy"});
  const History hist = model.fit(d.x, d.y, FitOptions().epochs(8).batch_size(32).verbose(0));
  const std::vector<double>& loss = hist.history.at("loss");
  EXPECT_LT(loss.back(), 0.7 * loss.front()) << loss.front() << " -> " << loss.back();
  EXPECT_GT(hist.history.at("accuracy").back(), 0.6);
  // Statistics moved, in float32.
  EXPECT_EQ(bn->moving_mean()->dtype(), float32);
  EXPECT_NE(bn->moving_variance()->value().to_vector<float>(), std::vector<float>(8, 1.f));
}

// A mixed_float16 model trained a little, its loss-scale state made distinctive.
std::shared_ptr<Sequential> trained_float16_model(Tensor& x, Tensor& y) {
  PolicyScope policy("mixed_float16");
  set_random_seed(3);
  make_blobs(96, x, y);
  auto model = mlp();
  model->build({-1, 2});
  model->compile("adam", std::make_shared<losses::SparseCategoricalCrossentropy>(true));
  for (int i = 0; i < 3; ++i) model->train_on_batch(x, y);
  auto lso = std::dynamic_pointer_cast<LossScaleOptimizer>(model->optimizer());
  EXPECT_NE(lso, nullptr);
  lso->dynamic_scale()->assign(Tensor::scalar<float>(1024.f));
  lso->step_counter()->assign(Tensor::scalar<int64_t>(7));
  return model;
}

void expect_same_values(const std::vector<VariablePtr>& a, const std::vector<VariablePtr>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]->dtype(), b[i]->dtype()) << a[i]->name();
    EXPECT_EQ(a[i]->read_value().to_vector<double>(), b[i]->read_value().to_vector<double>())
        << a[i]->name() << " vs " << b[i]->name();
  }
}

TEST(MixedTrainingSaving, FullModelRoundTripKeepsPoliciesAndLossScaleState) {
  Tensor x, y;
  auto saved = trained_float16_model(x, y);
  const std::string path = (testing::h5::temp_dir("mixed_model") / "model.h5").string();
  saved->save(path);
  // Loaded under the default float32 global policy: the layers keep the policy they were saved
  // with, and the optimizer comes back as the LossScaleOptimizer it was.
  ASSERT_EQ(mixed_precision::global_policy().name(), "float32");
  const std::shared_ptr<Model> loaded = load_model(path);
  for (const auto& layer : loaded->layers()) {
    EXPECT_EQ(layer->dtype_policy().name(), "mixed_float16") << layer->name();
  }
  auto lso = std::dynamic_pointer_cast<LossScaleOptimizer>(loaded->optimizer());
  ASSERT_NE(lso, nullptr);
  EXPECT_EQ(lso->name(), "loss_scale_optimizer");
  EXPECT_EQ(lso->loss_scale(), 1024.0);
  EXPECT_EQ(lso->step_counter()->value().item<int64_t>(), 7);
  EXPECT_EQ(lso->iteration_count(), saved->optimizer()->iteration_count());
  expect_same_values(saved->weights(), loaded->weights());
  expect_same_values(saved->optimizer()->variables(), loaded->optimizer()->variables());
  const Tensor p_saved = saved->predict(x), p_loaded = loaded->predict(x);
  EXPECT_EQ(p_loaded.dtype(), float16);
  EXPECT_EQ(p_saved.to_vector<float>(), p_loaded.to_vector<float>());
  // Both go on training the same way (same scale, same state).
  saved->train_on_batch(x, y);
  loaded->train_on_batch(x, y);
  expect_same_values(saved->weights(), loaded->weights());
}

TEST(MixedTrainingSaving, TrainingCheckpointRestoresTheLossScaleState) {
  Tensor x, y;
  auto saved = trained_float16_model(x, y);
  const std::string path = (testing::h5::temp_dir("mixed_ckpt") / "backup.h5").string();
  saving::write_training_checkpoint(*saved, path, "{}");
  Tensor x2, y2;
  auto restored = trained_float16_model(x2, y2);  // another instance; its state wiped below
  for (const VariablePtr& v : restored->weights()) v->assign(zeros_like(v->read_value()));
  for (const VariablePtr& v : restored->optimizer()->variables()) {
    v->assign(zeros_like(v->read_value()));
  }
  auto lso = std::dynamic_pointer_cast<LossScaleOptimizer>(restored->optimizer());
  ASSERT_NE(lso, nullptr);
  ASSERT_EQ(lso->loss_scale(), 0.0);
  saving::read_training_checkpoint(*restored, path);
  EXPECT_EQ(lso->loss_scale(), 1024.0);
  EXPECT_EQ(lso->step_counter()->value().item<int64_t>(), 7);
  expect_same_values(saved->optimizer()->variables(), restored->optimizer()->variables());
  expect_same_values(saved->weights(), restored->weights());
}

TEST(MixedTrainingSaving, ModelConfigRoundTripsWithPolicies) {
  std::shared_ptr<Sequential> model;
  {
    PolicyScope policy("mixed_bfloat16");
    auto head = std::make_shared<ActivationLayer>("softmax");
    head->set_dtype_policy("float32");
    model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
        std::make_shared<Dense>(4, "relu"), std::make_shared<BatchNormalization>(),
        std::make_shared<Dense>(2), head});
    model->build({-1, 3});
  }
  const std::string json = model->to_json();
  const std::shared_ptr<Model> back = model_from_json(json);
  EXPECT_EQ(back->to_json(), json);
  const auto layers = back->layers();
  ASSERT_EQ(layers.size(), 4u);
  EXPECT_EQ(layers[0]->dtype_policy().name(), "mixed_bfloat16");
  EXPECT_EQ(layers[1]->dtype_policy().name(), "mixed_bfloat16");
  EXPECT_EQ(layers[3]->dtype_policy().name(), "float32");
  EXPECT_EQ(back->predict(ones({2, 3})).dtype(), float32);
}

TEST(MixedTrainingCompile, AutoScaleLossCanBeTurnedOffAndIsNotDoubled) {
  PolicyScope policy("mixed_float16");
  auto model = mlp();
  model->compile(CompileOptions().optimizer("sgd").loss("mse").auto_scale_loss(false));
  EXPECT_EQ(std::dynamic_pointer_cast<LossScaleOptimizer>(model->optimizer()), nullptr);
  auto own = std::make_shared<LossScaleOptimizer>(std::make_shared<optimizers::SGD>());
  model->compile(CompileOptions().optimizer(own).loss("mse"));
  EXPECT_EQ(model->optimizer(), own);  // already a LossScaleOptimizer: used as it is
}

}  // namespace
}  // namespace strata
