// Checkpoints do not depend on the strategy (TensorFlow: distributed variables save one logical
// value): weights and whole models saved under MirroredStrategy load without a strategy and under
// any other, and the reverse; BackupAndRestore resumes a run under a strategy exactly where the
// interrupted one stopped.
#include <unistd.h>

#include <filesystem>

#include "datasets/temp_dir.h"
#include "distribute/variables/replicated_variable.h"
#include "framework/callbacks/backup_and_restore.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/framework/callbacks/callback_test_utils.h"

namespace strata::testing {
namespace {
namespace fs = std::filesystem;

std::shared_ptr<Sequential> classifier_in(distribute::Strategy* strategy) {
  if (strategy == nullptr) return small_classifier();
  auto scope = strategy->scope();
  return small_classifier();
}

void fit_epochs(Sequential& model, const ClassifierData& d, int epochs) {
  model.fit(d.x, d.y, FitOptions().epochs(epochs).batch_size(8).shuffle(false).verbose(0));
}

// Every copy of every mirrored weight of `model` holds exactly `values`.
void expect_every_copy_equals(const Model& model, const std::vector<Tensor>& values, int copies) {
  const std::vector<VariablePtr> weights = model.weights();
  ASSERT_EQ(weights.size(), values.size());
  for (size_t w = 0; w < weights.size(); ++w) {
    auto m = std::dynamic_pointer_cast<distribute::MirroredVariable>(weights[w]);
    ASSERT_NE(m, nullptr) << weights[w]->name() << " is not mirrored";
    ASSERT_EQ(m->num_copies(), copies);
    for (int c = 0; c < copies; ++c) {
      EXPECT_EQ(m->components()[size_t(c)]->value().to_vector<float>(), values[w].to_vector<float>())
          << weights[w]->name() << " copy " << c;
    }
  }
}

class StrategyCheckpoints : public ::testing::Test {
 protected:
  void SetUp() override { config::set_logical_cpu_devices(4); }
  void TearDown() override { config::set_logical_cpu_devices(1); }
  std::string path(const std::string& file) const { return dir_.file(file); }

  TempDir dir_;  // removed with its files when the test ends
};

TEST_F(StrategyCheckpoints, WeightsSavedUnderMirroredLoadWithoutAndUnderAnyStrategy) {
  const ClassifierData d = classifier_data(32, 3);
  distribute::MirroredStrategy mirrored(cpus(2));
  auto source = classifier_in(&mirrored);
  const std::vector<Tensor> initial = source->get_weights();
  fit_epochs(*source, d, 1);
  const std::vector<Tensor> trained = source->get_weights();
  ASSERT_NE(trained[0].to_vector<float>(), initial[0].to_vector<float>());
  for (const char* file : {"w.h5", "w.weights.h5", "model.h5"}) {
    if (std::string(file) == "model.h5") {
      source->save(path(file));
    } else {
      source->save_weights(path(file));
    }
  }

  distribute::OneDeviceStrategy one("/cpu:1");
  distribute::CentralStorageStrategy central(cpus(2));
  distribute::MirroredStrategy four(cpus(4));
  const std::vector<std::pair<std::string, distribute::Strategy*>> targets = {
      {"no strategy", nullptr}, {"OneDevice", &one}, {"CentralStorage", &central}, {"Mirrored(4)", &four}};
  for (const auto& [label, strategy] : targets) {
    for (const char* file : {"w.h5", "w.weights.h5", "model.h5"}) {
      SCOPED_TRACE(label + " loading " + file);
      auto target = classifier_in(strategy);
      ASSERT_EQ(target->get_weights()[0].to_vector<float>(), initial[0].to_vector<float>());
      target->load_weights(path(file));
      expect_weights_near(target->get_weights(), trained, 0.0, 0.0);
      if (strategy == &four) expect_every_copy_equals(*target, trained, 4);
      if (strategy == &one) {
        for (const VariablePtr& w : target->weights()) EXPECT_EQ(w->device(), Device::cpu(1));
      }
    }
  }
}

TEST_F(StrategyCheckpoints, WeightsSavedUnderCentralStorageLoadUnderMirroredAndWithout) {
  const ClassifierData d = classifier_data(32, 7);
  distribute::CentralStorageStrategy central(cpus(4));
  auto source = classifier_in(&central);
  fit_epochs(*source, d, 1);
  const std::vector<Tensor> trained = source->get_weights();
  source->save_weights(path("w.h5"));
  auto plain = classifier_in(nullptr);
  plain->load_weights(path("w.h5"));
  expect_weights_near(plain->get_weights(), trained, 0.0, 0.0);
  distribute::MirroredStrategy mirrored(cpus(2));
  auto target = classifier_in(&mirrored);
  target->load_weights(path("w.h5"));
  expect_every_copy_equals(*target, trained, 2);
}

TEST_F(StrategyCheckpoints, WeightsSavedWithoutStrategyLoadIntoEveryMirroredCopy) {
  const ClassifierData d = classifier_data(32, 4);
  auto source = classifier_in(nullptr);
  fit_epochs(*source, d, 1);
  const std::vector<Tensor> trained = source->get_weights();
  source->save_weights(path("w.h5"));
  source->save_weights(path("w.weights.h5"));
  const Tensor expected_predictions = source->predict(d.x, PredictOptions().batch_size(8).verbose(0));
  for (const char* file : {"w.h5", "w.weights.h5"}) {
    SCOPED_TRACE(file);
    distribute::MirroredStrategy mirrored(cpus(2));
    auto target = classifier_in(&mirrored);
    target->load_weights(path(file));
    expect_every_copy_equals(*target, trained, 2);
    // Both replicas compute with the loaded weights.
    const Tensor predictions = target->predict(d.x, PredictOptions().batch_size(8).verbose(0));
    expect_weights_near({predictions}, {expected_predictions}, 1e-6, 1e-6);
  }
}

TEST_F(StrategyCheckpoints, LoadModelOfAFileSavedUnderMirroredContinuesTraining) {
  const ClassifierData d = classifier_data(32, 5);
  distribute::MirroredStrategy mirrored(cpus(2));
  auto source = classifier_in(&mirrored);
  fit_epochs(*source, d, 1);
  source->save(path("model.h5"));
  const std::vector<Tensor> saved = source->get_weights();
  std::vector<Tensor> saved_slots;
  for (const VariablePtr& v : source->optimizer()->variables()) saved_slots.push_back(v->read_value());

  // Loaded without a strategy: the weights, the step count and the momentum slots come back.
  std::shared_ptr<Model> loaded = load_model(path("model.h5"));
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->distribute_strategy(), nullptr);
  expect_weights_near(loaded->get_weights(), saved, 0.0, 0.0);
  ASSERT_NE(loaded->optimizer(), nullptr);
  EXPECT_EQ(loaded->optimizer()->iteration_count(), 4);  // 32 samples / batch 8
  EXPECT_EQ(loaded->optimizer()->class_name(), "SGD");
  const std::vector<VariablePtr> loaded_slots = loaded->optimizer()->variables();
  ASSERT_EQ(loaded_slots.size(), saved_slots.size());
  std::vector<Tensor> loaded_values;
  for (const VariablePtr& v : loaded_slots) loaded_values.push_back(v->read_value());
  expect_weights_near(loaded_values, saved_slots, 0.0, 0.0);

  // One more epoch without a strategy ends where one more epoch under Mirrored does: the
  // optimizer state (momentum) was saved as one logical value.
  fit_epochs(*source, d, 1);
  const std::vector<Tensor> continued = source->get_weights();
  loaded->fit(d.x, d.y, FitOptions().epochs(1).batch_size(8).shuffle(false).verbose(0));
  expect_weights_near(loaded->get_weights(), continued, 1e-5);
  EXPECT_EQ(loaded->optimizer()->iteration_count(), 8);

  // A fresh model loaded without the optimizer state would not match: the slots matter.
  std::shared_ptr<Model> plain = load_model(path("model.h5"));
  plain->compile(CompileOptions()
                     .optimizer(std::make_shared<optimizers::SGD>(0.1, 0.9))
                     .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(true))
                     .metrics({"accuracy"}));
  plain->fit(d.x, d.y, FitOptions().epochs(1).batch_size(8).shuffle(false).verbose(0));
  double diff = 0;
  const std::vector<Tensor> pw = plain->get_weights();
  for (size_t w = 0; w < pw.size(); ++w) {
    const std::vector<float> a = pw[w].to_vector<float>(), b = continued[w].to_vector<float>();
    for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, double(std::fabs(a[i] - b[i])));
  }
  EXPECT_GT(diff, 1e-4) << "the comparison above would not notice lost momentum";
}

TEST_F(StrategyCheckpoints, LoadModelInsideAMirroredScopeMakesAMirroredModel) {
  const ClassifierData d = classifier_data(32, 6);
  auto source = classifier_in(nullptr);
  fit_epochs(*source, d, 1);
  source->save(path("model.h5"));
  const std::vector<Tensor> saved = source->get_weights();
  fit_epochs(*source, d, 1);
  const std::vector<Tensor> continued = source->get_weights();

  distribute::MirroredStrategy mirrored(cpus(2));
  std::shared_ptr<Model> loaded;
  {
    auto scope = mirrored.scope();
    loaded = load_model(path("model.h5"));
  }
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->distribute_strategy(), &mirrored);
  expect_every_copy_equals(*loaded, saved, 2);
  ASSERT_NE(loaded->optimizer(), nullptr);
  EXPECT_EQ(loaded->optimizer()->iteration_count(), 4);
  for (const VariablePtr& v : loaded->optimizer()->variables()) {
    EXPECT_NE(std::dynamic_pointer_cast<distribute::MirroredVariable>(v), nullptr) << v->name();
  }
  // Training on under the strategy continues the saved run.
  loaded->fit(d.x, d.y, FitOptions().epochs(1).batch_size(8).shuffle(false).verbose(0));
  expect_weights_near(loaded->get_weights(), continued, 1e-5);
}

// ---- BackupAndRestore ----

// Counts the training batches a run actually trains.
class CountBatches : public Callback {
 public:
  void on_train_batch_end(int, const Logs&) override { ++count; }
  int count = 0;
};

// Two epochs of 6 batches (48 samples, batch 8, shuffled with the global generator) under a
// fresh strategy (MirroredStrategy, or CentralStorageStrategy when replicas < 0), as a restarted
// process would run them.
std::vector<Tensor> run_under_strategy(int replicas, std::vector<CallbackPtr> callbacks) {
  std::unique_ptr<distribute::Strategy> strategy;
  if (replicas > 0) {
    strategy = std::make_unique<distribute::MirroredStrategy>(cpus(replicas));
  } else {
    strategy = std::make_unique<distribute::CentralStorageStrategy>(cpus(-replicas));
  }
  auto model = classifier_in(strategy.get());  // seeds the global generator
  const ClassifierData d = classifier_data(48, 8);
  model->fit(d.x, d.y, FitOptions().epochs(2).batch_size(8).verbose(0).callbacks(std::move(callbacks)));
  return model->get_weights();
}

TEST_F(StrategyCheckpoints, BackupAndRestoreUnderAStrategyResumesExactly) {
  for (int replicas : {2, 4, -2}) {  // Mirrored(2), Mirrored(4), CentralStorage(2)
    const std::vector<Tensor> expected = run_under_strategy(replicas, {});
    // Epoch backups (resume at the start of epoch 2) and every-2-batches backups (resume in
    // the middle of epoch 2).
    for (int64_t save_freq : {int64_t(0), int64_t(2)}) {
      SCOPED_TRACE(std::to_string(replicas) + " replicas, save_freq " + std::to_string(save_freq));
      const fs::path backup_dir =
          dir_.path() / ("backup" + std::to_string(replicas + 10) + "_" + std::to_string(save_freq));
      auto backup = [&] {
        BackupAndRestoreOptions o;
        if (save_freq > 0) o.save_freq(save_freq);
        return std::make_shared<BackupAndRestore>(backup_dir.string(), o);
      };
      EXPECT_THROW(run_under_strategy(replicas, {backup(), std::make_shared<CrashAfter>(9)}),
                   std::runtime_error);
      ASSERT_TRUE(fs::exists(backup_dir / "backup.h5"));
      auto counter = std::make_shared<CountBatches>();
      const std::vector<Tensor> resumed = run_under_strategy(replicas, {backup(), counter});
      expect_weights_near(resumed, expected, 0.0, 0.0);
      // It resumed rather than starting over: the last backup was at the end of epoch 1 (6 of 12
      // batches) or after batch 8.
      EXPECT_EQ(counter->count, save_freq == 0 ? 6 : 4);
      EXPECT_FALSE(fs::exists(backup_dir / "backup.h5")) << "removed when training ends";
    }
  }
}

}  // namespace
}  // namespace strata::testing
