#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <strata/strata.h>

#include "datasets/temp_dir.h"
#include "framework/callbacks/tensorboard.h"
#include "framework/summary/event_file_reader.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;
using testing::TempDir;

// tag -> [(step, value)] in file order, from the single event file of `dir`.
using Curves = std::map<std::string, std::vector<std::pair<int64_t, double>>>;

Curves read_curves(const std::filesystem::path& dir) {
  const auto files = summary::list_event_files(dir.string());
  EXPECT_EQ(files.size(), 1u) << dir;
  Curves curves;
  if (files.empty()) return curves;
  const auto events = summary::read_events(files[0]);
  if (events.empty()) {
    ADD_FAILURE() << "no events in " << files[0];
    return curves;
  }
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  for (size_t i = 1; i < events.size(); ++i) {
    for (const auto& s : events[i].scalars) curves[s.tag].push_back({events[i].step, s.value});
  }
  return curves;
}

std::vector<std::string> tags(const Curves& c) {
  std::vector<std::string> out;
  for (const auto& [tag, points] : c) out.push_back(tag);
  return out;
}

// A 3-class problem on random points; 40 samples.
struct Problem {
  Tensor x, y;
  std::shared_ptr<Sequential> model;
};

Problem make_problem(int64_t n = 40) {
  set_random_seed(11);
  Problem p;
  p.x = random_normal({n, 4});
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[size_t(i)] = i % 3;
  p.y = Tensor::from_vector(labels);
  p.model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(8, "relu"), std::make_shared<Dense>(3)});
  p.model->compile(std::make_shared<optimizers::SGD>(0.05),
                   std::make_shared<losses::SparseCategoricalCrossentropy>(true), {"accuracy"});
  return p;
}

// The batch-end logs fit reports, to compare batch-level scalars with.
class BatchRecorder : public Callback {
 public:
  void on_train_batch_end(int, const Logs& logs) override { logs_.push_back(logs); }
  std::vector<Logs> logs_;
};

void expect_curve(const Curves& c, const std::string& tag, const std::vector<double>& values) {
  auto it = c.find(tag);
  ASSERT_NE(it, c.end()) << tag;
  ASSERT_EQ(it->second.size(), values.size()) << tag;
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(it->second[i].first, static_cast<int64_t>(i)) << tag;             // step = epoch
    EXPECT_EQ(it->second[i].second, static_cast<float>(values[i])) << tag;  // written as float32
  }
}

TEST(TensorBoard, FitWritesEpochScalarsLikeKeras) {
  TempDir dir;
  Problem p = make_problem();
  auto tb = std::make_shared<TensorBoard>((dir.path() / "logs").string());
  History h = p.model->fit(
      p.x, p.y, FitOptions().epochs(3).batch_size(10).verbose(0).validation_split(0.25).callbacks({tb}));
  ASSERT_EQ(h.history["val_loss"].size(), 3u);

  const Curves train = read_curves(dir.path() / "logs" / "train");
  EXPECT_EQ(tags(train), (std::vector<std::string>{"epoch_accuracy", "epoch_learning_rate", "epoch_loss"}));
  expect_curve(train, "epoch_loss", h.history["loss"]);
  expect_curve(train, "epoch_accuracy", h.history["accuracy"]);
  expect_curve(train, "epoch_learning_rate", {0.05, 0.05, 0.05});

  const Curves val = read_curves(dir.path() / "logs" / "validation");
  EXPECT_EQ(tags(val), (std::vector<std::string>{"epoch_accuracy", "epoch_loss",
                                                 "evaluation_accuracy_vs_iterations",
                                                 "evaluation_loss_vs_iterations"}));
  expect_curve(val, "epoch_loss", h.history["val_loss"]);
  expect_curve(val, "epoch_accuracy", h.history["val_accuracy"]);
}

// The epoch's scalars are on disk when the next callback runs, before fit returns.
TEST(TensorBoard, FlushesAtEpochEnd) {
  class Check : public Callback {
   public:
    explicit Check(std::filesystem::path dir) : dir_(std::move(dir)) {}
    void on_epoch_end(int epoch, const Logs& logs) override {
      const Curves c = read_curves(dir_);
      ASSERT_EQ(c.at("epoch_loss").size(), static_cast<size_t>(epoch + 1));
      EXPECT_EQ(c.at("epoch_loss").back().second, static_cast<float>(logs.at("loss")));
      ++checked;
    }
    std::filesystem::path dir_;
    int checked = 0;
  };
  TempDir dir;
  Problem p = make_problem();
  auto tb = std::make_shared<TensorBoard>(dir.path().string());
  auto check = std::make_shared<Check>(dir.path() / "train");
  p.model->fit(p.x, p.y, FitOptions().epochs(2).batch_size(10).verbose(0).callbacks({tb, check}));
  EXPECT_EQ(check->checked, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "validation"));  // no validation data
}

TEST(TensorBoard, UpdateFreqBatch) {
  TempDir dir;
  Problem p = make_problem();
  auto tb = std::make_shared<TensorBoard>(dir.path().string(), "batch");
  auto rec = std::make_shared<BatchRecorder>();
  History h = p.model->fit(p.x, p.y,
                           FitOptions().epochs(2).batch_size(10).verbose(0).callbacks({tb, rec}));
  const Curves train = read_curves(dir.path() / "train");
  ASSERT_EQ(rec->logs_.size(), 8u);  // 4 batches x 2 epochs
  for (const char* name : {"loss", "accuracy"}) {
    const auto& points = train.at(std::string("batch_") + name);
    ASSERT_EQ(points.size(), 8u) << name;
    for (size_t i = 0; i < points.size(); ++i) {
      EXPECT_EQ(points[i].first, static_cast<int64_t>(i + 1));  // global batch count
      EXPECT_EQ(points[i].second, static_cast<float>(rec->logs_[i].at(name)));
    }
  }
  expect_curve(train, "epoch_loss", h.history["loss"]);  // epoch scalars are still written
  EXPECT_EQ(train.count("batch_learning_rate"), 0u);
}

TEST(TensorBoard, UpdateFreqEveryNBatches) {
  TempDir dir;
  Problem p = make_problem();
  auto tb = std::make_shared<TensorBoard>(dir.path().string(), 3);
  auto rec = std::make_shared<BatchRecorder>();
  p.model->fit(p.x, p.y, FitOptions().epochs(2).batch_size(10).verbose(0).callbacks({tb, rec}));
  const Curves train = read_curves(dir.path() / "train");
  const auto& points = train.at("batch_loss");
  ASSERT_EQ(points.size(), 2u);  // batches 3 and 6 of 8
  EXPECT_EQ(points[0].first, 3);
  EXPECT_EQ(points[1].first, 6);
  EXPECT_EQ(points[0].second, static_cast<float>(rec->logs_[2].at("loss")));
  EXPECT_EQ(points[1].second, static_cast<float>(rec->logs_[5].at("loss")));
}

// Keras opens new event files for each fit; steps count from the start of each fit.
TEST(TensorBoard, EachFitStartsNewFiles) {
  TempDir dir;
  Problem p = make_problem();
  auto tb = std::make_shared<TensorBoard>(dir.path().string(), TensorBoardOptions()
                                                                   .update_freq("batch")
                                                                   .write_steps_per_second(true));
  p.model->fit(p.x, p.y, FitOptions().epochs(1).batch_size(10).verbose(0).callbacks({tb}));
  p.model->fit(p.x, p.y, FitOptions().epochs(1).batch_size(20).verbose(0).callbacks({tb}));
  const auto files = summary::list_event_files((dir.path() / "train").string());
  ASSERT_EQ(files.size(), 2u);
  std::map<std::string, std::vector<int64_t>> steps;
  for (const auto& e : summary::read_events(files[1])) {
    for (const auto& s : e.scalars) steps[s.tag].push_back(e.step);
  }
  EXPECT_EQ(steps["batch_loss"], (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(steps["batch_steps_per_second"], (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(steps["epoch_steps_per_second"], (std::vector<int64_t>{0}));
}

// A fit that ends in an exception leaves its flushed epochs behind; the next fit starts anew.
TEST(TensorBoard, FitAfterAnInterruptedFit) {
  class Crash : public Callback {
   public:
    void on_epoch_end(int epoch, const Logs&) override {
      if (epoch == 1) throw ValueError("crash");
    }
  };
  TempDir dir;
  Problem p = make_problem();
  auto tb = std::make_shared<TensorBoard>(dir.path().string());
  EXPECT_THROW(p.model->fit(p.x, p.y, FitOptions().epochs(3).batch_size(10).verbose(0).callbacks(
                                          {tb, std::make_shared<Crash>()})),
               ValueError);
  EXPECT_EQ(read_curves(dir.path() / "train").at("epoch_loss").size(), 2u);
  p.model->fit(p.x, p.y, FitOptions().epochs(1).batch_size(10).verbose(0).callbacks({tb}));
  const auto files = summary::list_event_files((dir.path() / "train").string());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(summary::read_events(files[0]).size(), 1u + 2 * 3);  // version + 2 epochs x 3 tags
  EXPECT_EQ(summary::read_events(files[1]).size(), 1u + 3);
}

TEST(TensorBoard, EvaluateWritesEvaluationVsIterations) {
  TempDir dir;
  Problem p = make_problem();
  p.model->fit(p.x, p.y, FitOptions().epochs(1).batch_size(10).verbose(0));  // 4 iterations
  auto tb = std::make_shared<TensorBoard>(dir.path().string());
  auto scores = p.model->evaluate(p.x, p.y, EvaluateOptions().verbose(0).callbacks({tb}));
  const Curves val = read_curves(dir.path() / "validation");
  ASSERT_EQ(val.count("evaluation_loss_vs_iterations"), 1u);
  const auto& point = val.at("evaluation_loss_vs_iterations").at(0);
  EXPECT_EQ(point.first, 4);
  EXPECT_EQ(point.second, static_cast<float>(scores.at("loss")));
  EXPECT_EQ(val.at("evaluation_accuracy_vs_iterations").at(0).second,
            static_cast<float>(scores.at("accuracy")));
}

// During fit the validation run reaches the user's callbacks too (as in Keras), so each epoch's
// validation is also written against the optimizer's step count.
TEST(TensorBoard, FitValidationWritesEvaluationVsIterations) {
  TempDir dir;
  Problem p = make_problem();
  auto tb = std::make_shared<TensorBoard>(dir.path().string());
  History h = p.model->fit(
      p.x, p.y,
      FitOptions().epochs(2).batch_size(10).verbose(0).validation_split(0.25).callbacks({tb}));
  const Curves val = read_curves(dir.path() / "validation");
  const auto& points = val.at("evaluation_loss_vs_iterations");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].first, 3);  // 30 training samples in batches of 10
  EXPECT_EQ(points[1].first, 6);
  EXPECT_EQ(points[1].second, static_cast<float>(h.history.at("val_loss")[1]));
}

TEST(TensorBoard, ArgumentErrors) {
  expect_error<ValueError>([] { TensorBoard tb("logs", "sometimes"); },
                           {"update_freq", "\"epoch\"", "\"batch\"", "sometimes"});
  expect_error<ValueError>([] { TensorBoard tb("logs", "100"); }, {"integer"});
  expect_error<ValueError>([] { TensorBoard tb("logs", 0); }, {"update_freq", ">= 1", "got 0"});
  expect_error<ValueError>([] { TensorBoard tb("logs", -5); }, {"got -5"});
  expect_error<ValueError>([] { TensorBoard tb("logs", TensorBoardOptions().histogram_freq(1)); },
                           {"histogram_freq", "use 0"});
  EXPECT_EQ(TensorBoard().log_dir(), "logs");
  EXPECT_EQ(TensorBoard().options().update_freq_.batches(), 0);
  EXPECT_EQ(TensorBoard("l", "batch").options().update_freq_.batches(), 1);
  EXPECT_EQ(TensorBoard("l", size_t{250}).options().update_freq_.batches(), 250);
}

TEST(TensorBoard, UnwritableLogDirFailsBeforeTraining) {
  TempDir dir;
  const std::string file = dir.file("not_a_dir");
  std::ofstream(file) << "x";
  Problem p = make_problem();
  auto tb = std::make_shared<TensorBoard>(file + "/logs");
  expect_error<IOError>(
      [&] { p.model->fit(p.x, p.y, FitOptions().epochs(1).verbose(0).callbacks({tb})); },
      {"not_a_dir/logs/train", "log_dir"});
  EXPECT_EQ(p.model->optimizer()->iteration_count(), 0);
}

}  // namespace
}  // namespace strata
