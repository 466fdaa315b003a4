// The small task the parameter-server tests train, in one process or across processes: the
// tutorial's numbers (ids 0..8, label 1 for ids below 4; Embedding(9, 20) -> Dense sigmoid,
// RMSprop) and the step and dataset functions every task of those tests registers.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "distribute/parameter_server/step_registry.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {

inline constexpr int64_t kPsTestVocab = 9, kPsTestDim = 20;

// 256 (id, label) pairs; `seed` shifts the ids (one stream per worker).
inline data::Dataset ps_test_data(int seed) {
  std::vector<int64_t> ids;
  std::vector<float> labels;
  for (int i = 0; i < 256; ++i) {
    const int64_t id = (i * 7 + seed) % kPsTestVocab;
    ids.push_back(id);
    labels.push_back(id < 4 ? 1.0f : 0.0f);
  }
  return data::Dataset::from_tensor_slices({Tensor::from_vector(ids, Shape{256, 1}),
                                            Tensor::from_vector(labels, Shape{256, 1})});
}

// `pss_evaluation_shards`: CompileOptions::pss_evaluation_shards (exact evaluation).
inline std::shared_ptr<Model> ps_test_model(int64_t pss_evaluation_shards = 0) {
  set_random_seed(5);
  KerasTensor ids = Input({1}, DType::kInt64);
  KerasTensor x = Flatten()(Embedding(kPsTestVocab, kPsTestDim)(ids));
  KerasTensor out = Dense(1, "sigmoid")(x);
  auto model = std::make_shared<Model>(ids, out);
  model->compile(CompileOptions()
                     .optimizer(std::make_shared<optimizers::RMSprop>(0.05))
                     .loss(std::make_shared<losses::BinaryCrossentropy>())
                     .metrics({"accuracy"})
                     .pss_evaluation_shards(pss_evaluation_shards));
  return model;
}

// The same, its variables made in `strategy`'s scope.
inline std::shared_ptr<Model> ps_test_model_in(distribute::Strategy& strategy,
                                               int64_t pss_evaluation_shards = 0) {
  auto scope = strategy.scope();
  return ps_test_model(pss_evaluation_shards);
}

// "ps_test_eval_data": 16 batches of 16 from ps_test_data(0), once (finite), each 40 ms late;
// what exact evaluation shards.
inline data::Dataset ps_test_eval_data() { return ps_test_data(0).batch(16); }

// The arguments of a "ps_test_meet" closure: `count` of them scheduled at once, each with the
// same fresh `dir`, run on `count` different workers (one waiting to meet cannot take another).
inline std::vector<Tensor> ps_test_meet_args(const std::string& dir, int64_t count) {
  return {Tensor::from_vector(std::vector<uint8_t>(dir.begin(), dir.end())),
          Tensor::from_vector(std::vector<int64_t>{count})};
}

// "ps_test_data" (each worker's stream, shuffled, repeated, batches of 16; "ps_test_slow_data":
// the same, 20 ms a batch); "ps_test_train"
// (one train_on_batch, returns the loss); "ps_test_slow_train" (the same after 25 ms: long
// enough for a kill to land inside one); "ps_test_raise" (a ValueError); "ps_test_meet" (waits,
// up to a minute, until as many workers as asked are inside one: ps_test_meet_args; a file per
// arrival, so it works across processes).
inline void register_ps_test_functions() {
  using namespace distribute;
  const auto train = [](StepContext& ctx) {
    const data::Element batch = ctx.next();
    const Logs logs = ctx.model->train_on_batch(batch[0], batch[1]);
    return std::vector<Tensor>{
        Tensor::from_vector(std::vector<float>{float(logs.at("loss"))}, Shape{})};
  };
  register_dataset_function("ps_test_data", [](const DatasetContext& ctx) {
    return ps_test_data(ctx.worker_index).shuffle(64, 7).repeat().batch(16);
  });
  // The same batches, each 20 ms late: fit's steps on it take long enough for a signal to land
  // inside an epoch.
  register_dataset_function("ps_test_slow_data", [](const DatasetContext& ctx) {
    return ps_test_data(ctx.worker_index)
        .shuffle(64, 7)
        .repeat()
        .batch(16)
        .map([](const data::Element& batch) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          return batch;
        });
  });
  register_dataset_function("ps_test_eval_data", [](const DatasetContext&) {
    return ps_test_eval_data().map([](const data::Element& batch) {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      return batch;
    });
  });
  register_step_function("ps_test_train", train);
  register_step_function("ps_test_slow_train", [train](StepContext& ctx) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    return train(ctx);
  });
  register_step_function("ps_test_raise", [](StepContext&) -> std::vector<Tensor> {
    throw ValueError("ps_test_raise: the input is bad");
  });
  register_step_function("ps_test_meet", [](StepContext& ctx) {
    namespace fs = std::filesystem;
    const std::vector<uint8_t> path = ctx.args.at(0).to_vector<uint8_t>();
    const fs::path dir(std::string(path.begin(), path.end()));
    const int64_t count = ctx.args.at(1).item<int64_t>();
    fs::create_directories(dir);
    std::ofstream(dir / ("worker_" + std::to_string(ctx.worker_index))) << "here\n";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    for (;;) {
      int64_t here = 0;
      for (const auto& entry : fs::directory_iterator(dir)) here += entry.is_regular_file();
      if (here >= count) break;
      if (std::chrono::steady_clock::now() > deadline) {
        throw StateError("ps_test_meet: only " + std::to_string(here) + " of " +
                         std::to_string(count) + " workers came to " + dir.string());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return std::vector<Tensor>{
        Tensor::from_vector(std::vector<float>{float(ctx.worker_index)}, Shape{})};
  });
}

}  // namespace strata::testing
