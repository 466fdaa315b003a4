// Two workers of one job in one process (in_process_workers.h), each on its own thread: the
// seams a multi-worker strategy plugs into. Each worker's input pipeline reads a disjoint shard
// (InputContext), replica ids are global while variables are indexed locally, and plain fit()
// on both workers trains the same weights as one process on the whole global batches.
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "tests/distribute/distribute_test_utils.h"
#include "tests/datasets/temp_dir.h"
#include "tests/distribute/in_process_workers.h"

namespace strata::testing {
namespace {

// Runs fn(w) for every worker at once, each on its own thread; rethrows the first error.
void on_every_worker(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  for (int w = 0; w < n; ++w) {
    threads.emplace_back([&, w] {
      try {
        fn(w);
      } catch (...) {
        errors[size_t(w)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

TEST(InProcessWorkers, EachWorkersPipelineReadsADisjointShard) {
  auto workers = in_process_workers(2);
  std::vector<std::vector<int64_t>> seen(2);
  std::vector<distribute::InputContext> contexts(2);
  on_every_worker(2, [&](int w) {
    distribute::Strategy& s = *workers[size_t(w)];
    auto dist = s.distribute_datasets_from_function([&](const distribute::InputContext& c) {
      contexts[size_t(w)] = c;
      std::vector<int64_t> ids(16);
      for (int64_t i = 0; i < 16; ++i) ids[size_t(i)] = i;
      return data::Dataset::from_tensor_slices({Tensor::from_vector(ids, Shape{16})})
          .shard(c.num_input_pipelines, c.input_pipeline_id)
          .batch(c.get_per_replica_batch_size(4));
    });
    auto it = dist.make_iterator();
    while (auto batch = it->next()) {
      ASSERT_EQ(batch->per_replica.size(), 1u);  // one local replica
      EXPECT_DOUBLE_EQ(batch->fractions[0], 0.5);  // half of each global batch of 4
      for (int64_t id : batch->per_replica[0][0].to_vector<int64_t>()) seen[size_t(w)].push_back(id);
    }
  });
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(contexts[size_t(w)].num_input_pipelines, 2);
    EXPECT_EQ(contexts[size_t(w)].input_pipeline_id, w);
    EXPECT_EQ(contexts[size_t(w)].num_replicas_in_sync, 2);
    EXPECT_EQ(seen[size_t(w)].size(), 8u);
  }
  std::set<int64_t> all(seen[0].begin(), seen[0].end());
  for (int64_t id : seen[1]) EXPECT_TRUE(all.insert(id).second) << "sample " << id << " read twice";
  EXPECT_EQ(all.size(), 16u);
}

TEST(InProcessWorkers, GlobalReplicaIdsLocalCopies) {
  auto workers = in_process_workers(2);
  std::vector<VariablePtr> vars(2);
  for (int w = 0; w < 2; ++w) {
    auto scope = workers[size_t(w)]->scope();
    VariableSpec spec;
    spec.name = "v";
    spec.shape = Shape{1};
    spec.aggregation = VariableAggregation::kSum;
    vars[size_t(w)] = create_variable(spec);
  }
  std::vector<int> global(2, -1), local(2, -1);
  on_every_worker(2, [&](int w) {
    workers[size_t(w)]->run([&]() -> Tensor {
      const distribute::ReplicaContext* c = distribute::current_replica_context();
      global[size_t(w)] = c->replica_id_in_sync_group();
      local[size_t(w)] = c->local_replica_id();
      // Each worker adds its id + 1; the sum over the workers lands in both copies.
      vars[size_t(w)]->assign_add(Tensor::from_vector(std::vector<float>{float(w + 1)}, Shape{1}));
      return Tensor();
    });
  });
  EXPECT_EQ(global, (std::vector<int>{0, 1}));
  EXPECT_EQ(local, (std::vector<int>{0, 0}));
  for (int w = 0; w < 2; ++w) EXPECT_FLOAT_EQ(vars[size_t(w)]->value().to_vector<float>()[0], 3.f);
  EXPECT_TRUE(workers[0]->is_chief());
  EXPECT_FALSE(workers[1]->is_chief());
  EXPECT_FALSE(workers[1]->should_checkpoint());
}

TEST(InProcessWorkers, FitOnTwoWorkersMatchesOneProcess) {
  const ClassifierData d = classifier_data(48);
  const auto options = FitOptions().epochs(2).batch_size(8).shuffle(false).verbose(0);
  std::shared_ptr<Sequential> alone = small_classifier("sgd");
  alone->fit(d.x, d.y, options);

  auto workers = in_process_workers(2);
  std::vector<std::shared_ptr<Sequential>> models(2);
  for (int w = 0; w < 2; ++w) {  // built one after the other: the same seed, the same weights
    auto scope = workers[size_t(w)]->scope();
    models[size_t(w)] = small_classifier("sgd");
  }
  // Each worker gets the whole global batches and keeps its half (distribute_input).
  on_every_worker(2, [&](int w) { models[size_t(w)]->fit(d.x, d.y, options); });
  expect_weights_near(models[0]->get_weights(), models[1]->get_weights(), 0.0, 0.0);
  expect_weights_near(models[0]->get_weights(), alone->get_weights(), 1e-5, 1e-6);
}

TEST(InProcessWorkers, OnlyTheChiefWritesCheckpointsSummariesAndLogs) {
  const ClassifierData d = classifier_data(32);
  TempDir dir;
  auto workers = in_process_workers(2);
  std::vector<std::shared_ptr<Sequential>> models(2);
  for (int w = 0; w < 2; ++w) {
    auto scope = workers[size_t(w)]->scope();
    models[size_t(w)] = small_classifier("sgd");
  }
  const std::string checkpoint = dir.file("ckpt/model.h5"), csv = dir.file("history.csv");
  const std::string logs = (dir.path() / "tb").string();
  on_every_worker(2, [&](int w) {
    // Every worker runs the same callbacks with the same paths, as the same program would.
    models[size_t(w)]->fit(
        d.x, d.y,
        FitOptions().epochs(3).batch_size(8).shuffle(false).verbose(0).callbacks(
            {std::make_shared<ModelCheckpoint>(checkpoint), std::make_shared<CSVLogger>(csv),
             std::make_shared<TensorBoard>(logs)}));
  });
  namespace fs = std::filesystem;
  EXPECT_TRUE(fs::exists(checkpoint));
  EXPECT_TRUE(fs::exists(fs::path(logs) / "train"));
  // Worker 1's temporary copies are gone, and the log has one row per epoch, not two.
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().string().find("workertemp"), std::string::npos) << e.path();
  }
  std::ifstream in(csv);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 1 + 3);  // header + epochs
}

TEST(InProcessWorkers, BackupAndRestoreResumesEveryWorkerAtTheChiefsStep) {
  const ClassifierData d = classifier_data(32);
  TempDir dir;
  const std::string backup_dir = (dir.path() / "backup").string();
  auto workers = in_process_workers(2);
  std::vector<std::shared_ptr<Sequential>> models(2);
  for (int w = 0; w < 2; ++w) {
    auto scope = workers[size_t(w)]->scope();
    models[size_t(w)] = small_classifier("sgd");
  }
  const auto fit = [&](int w, int epochs) {
    auto backup = std::make_shared<BackupAndRestore>(
        backup_dir, BackupAndRestoreOptions().delete_checkpoint(false));
    return models[size_t(w)]->fit(
        d.x, d.y,
        FitOptions().epochs(epochs).batch_size(8).shuffle(false).verbose(0).callbacks({backup}));
  };
  on_every_worker(2, [&](int w) { fit(w, 2); });
  namespace fs = std::filesystem;
  EXPECT_TRUE(fs::exists(fs::path(backup_dir) / "backup.h5"));
  EXPECT_FALSE(fs::exists(fs::path(backup_dir) / "workertemp_1"));
  // A restarted job: both workers restore the chief's backup and train only the third epoch.
  std::vector<size_t> epochs_trained(2);
  on_every_worker(2, [&](int w) { epochs_trained[size_t(w)] = fit(w, 3).history.at("loss").size(); });
  EXPECT_EQ(epochs_trained, (std::vector<size_t>{1, 1}));
  expect_weights_near(models[0]->get_weights(), models[1]->get_weights(), 0.0, 0.0);
}

}  // namespace
}  // namespace strata::testing
