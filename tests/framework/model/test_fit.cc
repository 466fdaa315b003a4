#include <gtest/gtest.h>

#include <sstream>

#include <strata/strata.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

// Two Gaussian blobs per class, 3 classes, 2-D: a small MLP must separate them.
void make_blobs(int64_t n, Tensor& x, Tensor& y) {
  Tensor noise = random_normal({n, 2}, 0.0, 0.3);
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

std::shared_ptr<Sequential> small_mlp() {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(16, "relu"), std::make_shared<Dense>(3)});
}

TEST(Fit, ReachesKnownAccuracyWithValidation) {
  set_random_seed(1);
  Tensor x, y;
  make_blobs(600, x, y);
  auto model = small_mlp();
  model->compile("adam", std::make_shared<losses::SparseCategoricalCrossentropy>(true), {"accuracy"});
  History h = model->fit(x, y, FitOptions().epochs(15).batch_size(32).validation_split(0.2).verbose(0));
  ASSERT_EQ(h.epoch.size(), 15u);
  for (const char* key : {"loss", "accuracy", "val_loss", "val_accuracy"}) {
    ASSERT_EQ(h.history[key].size(), 15u) << key;
  }
  EXPECT_GT(h.history["val_accuracy"].back(), 0.95);
  EXPECT_LT(h.history["loss"].back(), h.history["loss"].front());
  auto scores = model->evaluate(x, y, EvaluateOptions().verbose(0));
  EXPECT_GT(scores.at("accuracy"), 0.95);
  EXPECT_TRUE(scores.count("loss"));
}

TEST(Fit, PredictKeepsInputOrderAndMatchesCall) {
  set_random_seed(2);
  auto model = small_mlp();
  Tensor x = random_normal({70, 2});
  Tensor p = model->predict(x, PredictOptions().batch_size(16));
  EXPECT_EQ(p.shape(), Shape({70, 3}));
  testing::expect_all_close(p, (*model)(x), 1e-5, 1e-6);
  testing::expect_all_close(model->predict_on_batch(x.slice(0, 5)), p.slice(0, 5), 1e-5, 1e-6);
}

TEST(Fit, DatasetInputAndStepsPerEpoch) {
  set_random_seed(4);
  Tensor x, y;
  make_blobs(300, x, y);
  auto model = small_mlp();
  model->compile("adam", "sparse_categorical_crossentropy", {"sparse_categorical_accuracy"});
  // Probabilities expected by the loss: add a softmax by compiling a logits loss instead.
  model->compile(CompileOptions()
                     .optimizer(std::make_shared<optimizers::Adam>(0.01))
                     .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(true))
                     .metrics({"accuracy"}));
  auto ds = data::Dataset::from_tensor_slices({x, y}).shuffle(300, 7).batch(30).repeat();
  History h = model->fit(ds, FitOptions().epochs(5).steps_per_epoch(10).verbose(0));
  EXPECT_EQ(h.history["loss"].size(), 5u);
  EXPECT_GT(h.history["accuracy"].back(), 0.9);
  testing::expect_error<ValueError>([&] { model->fit(ds, FitOptions().verbose(0)); },
                                    {"infinite", "steps_per_epoch"});
}

TEST(Fit, TrainAndTestOnBatch) {
  set_random_seed(5);
  auto model = small_mlp();
  model->compile("sgd", std::make_shared<losses::SparseCategoricalCrossentropy>(true), {"accuracy"});
  Tensor x = random_normal({8, 2});
  Tensor y = Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1});
  Logs a = model->train_on_batch(x, y);
  EXPECT_TRUE(a.contains("loss"));
  EXPECT_TRUE(a.contains("accuracy"));
  Logs b = model->test_on_batch(x, y);
  EXPECT_TRUE(b.contains("loss"));
  EXPECT_EQ(model->optimizer()->iteration_count(), 1);
}

TEST(Fit, ClassAndSampleWeightsChangeTheLoss) {
  set_random_seed(6);
  auto model = small_mlp();
  model->compile("sgd", std::make_shared<losses::SparseCategoricalCrossentropy>(true));
  Tensor x = random_normal({6, 2});
  Tensor y = Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 0, 1, 2});
  const double plain = model->evaluate(x, y, EvaluateOptions().verbose(0)).at("loss");
  const double weighted =
      model->evaluate(x, y, EvaluateOptions().verbose(0).sample_weight(full({6}, 2.0))).at("loss");
  EXPECT_NEAR(weighted, 2 * plain, 1e-4);
  History h = model->fit(x, y, FitOptions().epochs(1).verbose(0).class_weight({{0, 1.0}, {1, 2.0}, {2, 0.5}}));
  EXPECT_EQ(h.history["loss"].size(), 1u);
  testing::expect_error<ValueError>(
      [&] { model->fit(x, y, FitOptions().verbose(0).class_weight({{0, 1.0}})); }, {"class 1"});
}

TEST(Fit, CallbacksSeeEveryEventAndCanStop) {
  struct Recorder : Callback {
    std::vector<std::string> events;
    void on_train_begin(const Logs&) override { events.push_back("train_begin"); }
    void on_epoch_begin(int e, const Logs&) override { events.push_back("epoch_begin " + std::to_string(e)); }
    void on_train_batch_end(int b, const Logs& l) override {
      if (l.contains("loss")) events.push_back("batch " + std::to_string(b));
    }
    void on_epoch_end(int e, const Logs& l) override {
      events.push_back("epoch_end " + std::to_string(e));
      if (e == 1) model()->stop_training = true;
    }
    void on_train_end(const Logs&) override { events.push_back("train_end"); }
  };
  set_random_seed(8);
  auto model = small_mlp();
  model->compile("adam", std::make_shared<losses::SparseCategoricalCrossentropy>(true));
  auto rec = std::make_shared<Recorder>();
  Tensor x = random_normal({10, 2});
  Tensor y = Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0});
  model->fit(x, y, FitOptions().epochs(5).batch_size(5).verbose(0).callbacks({rec}));
  EXPECT_EQ(rec->events, (std::vector<std::string>{"train_begin", "epoch_begin 0", "batch 0", "batch 1",
                                                   "epoch_end 0", "epoch_begin 1", "batch 0", "batch 1",
                                                   "epoch_end 1", "train_end"}));
}

TEST(Fit, ErrorsAreClear) {
  auto model = small_mlp();
  Tensor x = zeros({4, 2});
  Tensor y = zeros({4, 3});
  testing::expect_error<StateError>([&] { model->fit(x, y); }, {"compile"});
  model->compile("adam", "mse");
  testing::expect_error<ShapeError>([&] { model->fit(x, zeros({3, 3}), FitOptions().verbose(0)); },
                                    {"[4,2]", "[3,3]"});
  testing::expect_error<ValueError>([&] { model->fit(x, y, FitOptions().batch_size(0)); }, {"batch_size"});
  testing::expect_error<ValueError>([&] { model->compile("nadamx", "mse"); }, {"nadamx"});
  // A built model called with the wrong feature count.
  model->fit(x, y, FitOptions().verbose(0).epochs(1));
  testing::expect_error<ShapeError>([&] { model->predict(zeros({4, 5})); }, {"[4,5]"});
}

TEST(Progbar, KerasFormat) {
  EXPECT_EQ(ProgbarLogger::bar(469, 469), "[==============================]");
  EXPECT_EQ(ProgbarLogger::bar(0, 10), "[..............................]");
  EXPECT_EQ(ProgbarLogger::bar(5, 10), "[==============>...............]");
  EXPECT_EQ(ProgbarLogger::format_value(0.12344), "0.1234");
  EXPECT_EQ(ProgbarLogger::format_value(1e-5), "1.0000e-05");

  std::ostringstream out;
  auto bar = std::make_shared<ProgbarLogger>(&out, /*interactive=*/0);
  set_random_seed(10);
  auto model = small_mlp();
  model->compile("adam", std::make_shared<losses::SparseCategoricalCrossentropy>(true), {"accuracy"});
  Tensor x = random_normal({20, 2});
  Tensor y = Tensor::from_vector(std::vector<int64_t>(20, 1));
  // verbose=0 adds no logger of its own; ours prints as verbose=1 sees it.
  FitOptions o = FitOptions().epochs(2).batch_size(10).verbose(0).callbacks({bar});
  model->fit(x, y, o);
  const std::string s = out.str();
  // The logger's params come from fit (verbose 0), so it stays silent; run it as verbose=1.
  EXPECT_TRUE(s.empty()) << s;
  std::ostringstream out1;
  auto bar1 = std::make_shared<ProgbarLogger>(&out1, 0);
  bar1->set_params({2, 2, 1});
  bar1->on_train_begin(Logs());
  bar1->on_epoch_begin(0, Logs());
  Logs logs;
  logs.set("loss", 0.5);
  logs.set("accuracy", 0.75);
  bar1->on_train_batch_end(1, logs);
  bar1->on_epoch_end(0, logs);
  const std::string line = out1.str();
  EXPECT_EQ(line.substr(0, 11), "Epoch 1/2\n2") << line;
  EXPECT_NE(line.find("2/2 [==============================] - 0s "), std::string::npos) << line;
  EXPECT_NE(line.find("/step - loss: 0.5000 - accuracy: 0.7500\n"), std::string::npos) << line;
}

}  // namespace
}  // namespace strata
