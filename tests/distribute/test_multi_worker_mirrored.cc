// MultiWorkerMirroredStrategy across real processes on loopback: each worker is this test binary
// started again with TF_CONFIG (worker_processes.h) running MultiWorkerChild.Run, which trains
// under the strategy and writes its final weights and logs; the parent compares them with the
// same training in one process on the global batch (TensorFlow's multi_worker_test_base idea).
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "datasets/tfrecord/example_builder.h"
#include "datasets/tfrecord/example_parsing.h"
#include "datasets/tfrecord/tfrecord_dataset.h"
#include "distribute/collectives/nccl_support.h"
#include "framework/summary/record_writer.h"
#include "distribute/multi_worker_mirrored_strategy.h"
#include "framework/strategy/replica_context.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/distribute/in_process_workers.h"
#include "tests/distribute/worker_processes.h"

namespace strata::testing {
namespace {

constexpr const char* kScenario = "STRATA_TEST_MWMS_SCENARIO";
constexpr const char* kOut = "STRATA_TEST_MWMS_OUT";
constexpr const char* kChildTest = "MultiWorkerChild.Run";

// What a run leaves behind: its weights, per-epoch loss/accuracy and what predict returned.
struct RunResult {
  std::vector<std::vector<float>> weights;
  std::vector<double> loss, accuracy;
  std::vector<float> predictions;
  // MultiWorkerMirroredStrategy::state_exchange_counts(): {folded, separate}.
  std::vector<float> exchanges;
};

void write_floats(std::ostream& out, const char* tag, const std::vector<float>& v) {
  out << tag << " " << v.size();
  char buf[32];
  for (float f : v) {
    std::snprintf(buf, sizeof buf, " %.9g", double(f));
    out << buf;
  }
  out << "\n";
}

void write_result(const std::string& path, const RunResult& r) {
  std::ofstream out(path + ".tmp");
  for (const auto& w : r.weights) write_floats(out, "w", w);
  write_floats(out, "loss", std::vector<float>(r.loss.begin(), r.loss.end()));
  write_floats(out, "accuracy", std::vector<float>(r.accuracy.begin(), r.accuracy.end()));
  write_floats(out, "predictions", r.predictions);
  write_floats(out, "exchanges", r.exchanges);
  out.close();
  std::rename((path + ".tmp").c_str(), path.c_str());
}

RunResult read_result(const std::string& path) {
  RunResult r;
  std::istringstream in(read_file_text(path));
  std::string tag;
  size_t n = 0;
  while (in >> tag >> n) {
    std::vector<float> v(n);
    for (float& f : v) in >> f;
    if (tag == "w") r.weights.push_back(v);
    if (tag == "loss") r.loss.assign(v.begin(), v.end());
    if (tag == "accuracy") r.accuracy.assign(v.begin(), v.end());
    if (tag == "predictions") r.predictions = v;
    if (tag == "exchanges") r.exchanges = v;
  }
  return r;
}

std::vector<std::vector<float>> flat_weights(const Model& model) {
  std::vector<std::vector<float>> out;
  for (const Tensor& w : model.get_weights()) out.push_back(w.cast(float32).to_vector<float>());
  return out;
}

// The same training everywhere: 96 samples, global batch 24, 2 epochs, SGD with momentum,
// accuracy; then predict on 50 samples in batches of 24 (a final partial batch).
constexpr int64_t kSamples = 96, kBatch = 24;

// What a fit leaves: the weights, the epochs' loss and accuracy, then predict on 50 samples
// in batches of kBatch (a final partial batch).
RunResult fit_result(Model& model, History h) {
  RunResult r;
  r.weights = flat_weights(model);
  r.loss = h.history["loss"];
  r.accuracy = h.history["accuracy"];
  const ClassifierData p = classifier_data(50, 11);
  r.predictions = model.predict(p.x, PredictOptions().batch_size(kBatch)).to_vector<float>();
  return r;
}

RunResult train_with_fit(distribute::Strategy* strategy, Norm norm = Norm::kNone,
                         const std::string& optimizer = "sgd_momentum") {
  Tf32Scope exact(false);   // exact float32 on a GPU: compared at rtol 1e-5
  std::shared_ptr<Sequential> model;
  {
    std::optional<distribute::Strategy::Scope> scope;
    if (strategy) scope.emplace(strategy->scope());
    model = small_classifier(optimizer, norm);
  }
  const ClassifierData d = classifier_data(kSamples);
  return fit_result(*model, model->fit(d.x, d.y, FitOptions().batch_size(kBatch).epochs(2).verbose(0)));
}

// A custom loop (strategy.run, strategy.reduce, the optimizer's own all-reduce): 40 samples in
// global batches of 16 (16, 16, 8); loss = the global batch's mean.
// With kOff each worker reads its own shard (dataset.shard) in batches of 16 / workers, which
// together are the same global batches; "off_unsharded" reads everything (the same data on
// every worker); "off_uneven" gives worker 1 one batch less.
RunResult train_custom_loop(distribute::Strategy* strategy,
                            distribute::AutoShardPolicy policy = distribute::AutoShardPolicy::kAuto,
                            const std::string& variant = "") {
  Tf32Scope exact(false);   // exact float32 on a GPU: compared at rtol 1e-5
  distribute::Strategy& s = strategy ? *strategy : *distribute::get_strategy();
  std::shared_ptr<Sequential> model;
  std::shared_ptr<optimizers::Optimizer> opt;
  {
    std::optional<distribute::Strategy::Scope> scope;
    if (strategy) scope.emplace(strategy->scope());
    model = small_classifier();
    opt = std::make_shared<optimizers::SGD>(0.1, 0.9);
  }
  const ClassifierData d = classifier_data(40, 3);
  data::Dataset ds = data::Dataset::from_tensor_slices({d.x, d.y}).batch(16);
  if (policy == distribute::AutoShardPolicy::kOff) {
    const distribute::InputContext c = s.input_context();
    data::Dataset slices = data::Dataset::from_tensor_slices({d.x, d.y});
    if (variant != "off_unsharded") slices = slices.shard(c.num_input_pipelines, c.input_pipeline_id);
    if (variant == "off_uneven" && c.input_pipeline_id == 1) slices = slices.take(12);
    ds = slices.batch(16 / c.num_input_pipelines);
  }
  const losses::SparseCategoricalCrossentropy per_sample(true, losses::Reduction::kNone);
  RunResult r;
  auto it = s.experimental_distribute_dataset(ds, policy).make_iterator();
  while (std::optional<distribute::DistributedBatch> batch = it->next()) {
    const distribute::PerReplica losses = s.run(
        [&](const data::Element& b) {
          distribute::ReplicaContext* replica = distribute::current_replica_context();
          const double fraction = replica ? replica->batch_fraction() : 1.0;
          GradientTape tape;
          const Tensor loss = reduce_mean(per_sample(b[1], (*model)(b[0], true))) * fraction;
          const std::vector<VariablePtr> vars = model->trainable_variables();
          opt->apply_gradients(tape.gradient(loss, vars), vars);
          return loss;
        },
        *batch);
    r.loss.push_back(s.reduce(ReduceOp::kSum, losses).item<double>());
  }
  r.weights = flat_weights(*model);
  return r;
}

// ---- TFRecord input divided by file (AutoShardPolicy::kAuto's choice for a dataset of files) ----

constexpr const char* kDataDir = "STRATA_TEST_MWMS_DATA_DIR";
constexpr int kRecordFiles = 4;

// classifier_data(kSamples) as kRecordFiles TFRecord files of tf.train.Example ("x": 36 floats,
// "y": the label), kSamples / kRecordFiles consecutive samples in each.
void write_classifier_records(const std::string& dir) {
  const ClassifierData d = classifier_data(kSamples);
  const std::vector<float> xs = d.x.to_vector<float>();
  const std::vector<int64_t> ys = d.y.to_vector<int64_t>();
  const int64_t per_file = kSamples / kRecordFiles;
  for (int f = 0; f < kRecordFiles; ++f) {
    TFRecordWriter w(dir + "/part-" + std::to_string(f) + ".tfrecord");
    for (int64_t i = f * per_file; i < (f + 1) * per_file; ++i) {
      w.write(data::ExampleBuilder()
                  .add_float("x", std::vector<float>(xs.begin() + i * 36, xs.begin() + (i + 1) * 36))
                  .add_int64("y", {ys[size_t(i)]})
                  .serialize());
    }
  }
}

// The records of `dir`, in global batches of kBatch. `cycle_length` 1 reads the files one after
// another (each worker, on its own files); the one-process reference reads two at a time in
// blocks of half a batch, so that each of its batches is the two workers' batches of that step
// together: [part-0 12, part-1 12], [part-0 12, part-1 12], [part-2 12, part-3 12], ...
data::Dataset classifier_records(const std::string& dir, int cycle_length, int block_length) {
  const data::FeatureSpecs spec = {{"x", data::FixedLenFeature({6, 6, 1}, float32)},
                                   {"y", data::FixedLenFeature({}, int64)}};
  return data::Dataset::list_files(dir + "/part-*.tfrecord", /*shuffle=*/false)
      .interleave([](const data::Element& f) { return data::TFRecordDataset({data::record_bytes(f[0])}); },
                  cycle_length, block_length)
      .map([spec](const data::Element& e) {
        data::ParsedFeatures f = data::parse_single_example(e[0], spec);
        return data::Element{f["x"].values, f["y"].values};
      })
      .batch(kBatch);
}

RunResult train_on_records(distribute::Strategy* strategy, const std::string& dir) {
  Tf32Scope exact(false);   // exact float32 on a GPU: compared at rtol 1e-5
  std::shared_ptr<Sequential> model;
  {
    std::optional<distribute::Strategy::Scope> scope;
    if (strategy) scope.emplace(strategy->scope());
    model = small_classifier("sgd_momentum");
  }
  const data::Dataset ds = strategy ? classifier_records(dir, 1, 1)
                                    : classifier_records(dir, 2, int(kBatch / 2));
  return fit_result(*model, model->fit(ds, FitOptions().epochs(2).verbose(0)));
}

// Records each finished epoch in a file, so the parent knows training is under way.
class EpochMarker final : public Callback {
 public:
  explicit EpochMarker(std::string path) : path_(std::move(path)) {}
  void on_epoch_end(int epoch, const Logs&) override {
    std::ofstream(path_) << epoch << "\n";
  }

 private:
  std::string path_;
};

constexpr const char* kBackupDir = "STRATA_TEST_MWMS_BACKUP_DIR";
constexpr const char* kKillAt = "STRATA_TEST_MWMS_KILL_AT";  // "<worker>:<epoch>:<batch>"

// Kills this process (SIGKILL: no cleanup, as a machine that dies) at a chosen batch.
class KillAt final : public Callback {
 public:
  KillAt(int epoch, int batch) : epoch_(epoch), batch_(batch) {}
  void on_epoch_begin(int epoch, const Logs&) override { current_ = epoch; }
  void on_train_batch_end(int batch, const Logs&) override {
    if (current_ == epoch_ && batch == batch_) raise(SIGKILL);
  }

 private:
  int epoch_, batch_, current_ = -1;
};

// 4 epochs of 4 steps with a backup at each epoch end in `backup_dir`; `kill_at`
// ("<worker>:<epoch>:<batch>") kills that worker there.
RunResult train_with_backup(distribute::Strategy* strategy, const std::string& backup_dir,
                            const std::string& kill_at) {
  Tf32Scope exact(false);   // exact float32 on a GPU: compared at rtol 1e-5
  std::shared_ptr<Sequential> model;
  {
    auto scope = strategy->scope();
    model = small_classifier("sgd_momentum");
  }
  std::vector<CallbackPtr> callbacks{std::make_shared<BackupAndRestore>(backup_dir)};
  int worker = -1, epoch = -1, batch = -1;
  if (std::sscanf(kill_at.c_str(), "%d:%d:%d", &worker, &epoch, &batch) == 3 &&
      worker == strategy->worker_index()) {
    callbacks.push_back(std::make_shared<KillAt>(epoch, batch));
  }
  const ClassifierData d = classifier_data(kSamples);
  History h = model->fit(d.x, d.y, FitOptions().batch_size(kBatch).epochs(4).verbose(0).callbacks(callbacks));
  RunResult r;
  r.weights = flat_weights(*model);
  r.loss = h.history["loss"];
  return r;
}

constexpr const char* kGpu = "STRATA_TEST_MWMS_GPU";

// "lonely": a worker whose peer never comes gives up after 5 s. The workers of one test share
// this machine's devices, so only "nccl_fit" (one GPU per worker) uses NCCL: NCCL refuses a GPU
// that two ranks of one communicator share, as two workers on every GPU would be.
// "fit_buckets": 64-byte gradient buckets (every gradient its own all-reduce, started during
// the backward pass) instead of one.
distribute::CommunicationOptions test_options(const std::string& scenario) {
  distribute::CommunicationOptions options =
      distribute::CommunicationOptions().timeout_seconds(30).heartbeat_timeout_seconds(3)
      .register_timeout_seconds(scenario == "lonely" ? 5 : 40)
      .implementation(scenario == "nccl_fit" ? distribute::CommunicationImplementation::kNccl
                                             : distribute::CommunicationImplementation::kRing);
  if (scenario == "fit_buckets") options.bytes_per_pack(64);
  return options;
}

// A fit's result with how its steps exchanged their state (folded into the last bucket or not).
RunResult with_exchanges(RunResult r, const distribute::MultiWorkerMirroredStrategy& s) {
  const auto counts = s.state_exchange_counts();
  r.exchanges = {float(counts.folded), float(counts.separate)};
  return r;
}

// ---- the child: one worker of the job ----

TEST(MultiWorkerChild, Run) {
  const char* scenario = std::getenv(kScenario);
  if (scenario == nullptr) GTEST_SKIP() << "runs as a worker process of MultiWorkerMirrored tests";
  const std::string out = std::getenv(kOut);
  const std::string what = scenario;
  std::vector<std::string> devices;
  if (const char* gpu = std::getenv(kGpu)) devices.push_back(std::string("/gpu:") + gpu);
  // The BatchNorm + Adam run is compared with MirroredStrategy over two CPUs: its workers train
  // on the CPU too, also on a GPU machine. (There a bias followed by BatchNorm, whose gradient is
  // only rounding noise that Adam magnifies, ended 3e-5 apart between GPU and CPU: an H200.)
  if (what == "fit_bn" && devices.empty()) devices.push_back("/cpu:0");
  auto strategy = std::make_shared<distribute::MultiWorkerMirroredStrategy>(
      nullptr, test_options(what), devices);
  if (what == "fit" || what == "lonely" || what == "nccl_fit" || what == "fit_buckets") {
    write_result(out, with_exchanges(train_with_fit(strategy.get()), *strategy));
  } else if (what == "fit_bn") {
    write_result(out, with_exchanges(train_with_fit(strategy.get(), Norm::kBatchNorm, "adam"),
                                     *strategy));
  } else if (what == "custom") {
    write_result(out, train_custom_loop(strategy.get()));
  } else if (what.rfind("off", 0) == 0) {
    write_result(out, train_custom_loop(strategy.get(), distribute::AutoShardPolicy::kOff, what));
  } else if (what == "tfrecord_fit" || what == "tfrecord_uneven") {
    write_result(out, train_on_records(strategy.get(), std::getenv(kDataDir)));
  } else if (what == "long") {
    std::shared_ptr<Sequential> model;
    {
      auto scope = strategy->scope();
      model = small_classifier("sgd_momentum");
    }
    const ClassifierData d = classifier_data(kSamples);
    model->fit(d.x, d.y, FitOptions().batch_size(kBatch).epochs(100000).verbose(0).callbacks(
                             {std::make_shared<EpochMarker>(out)}));
  } else if (what == "backup") {
    write_result(out, train_with_backup(strategy.get(), std::getenv(kBackupDir),
                                        std::getenv(kKillAt) ? std::getenv(kKillAt) : ""));
  } else {
    FAIL() << "unknown scenario " << what;
  }
}

// ---- the tests ----

class MultiWorkerMirrored : public WorkerJobTest {
 protected:
  MultiWorkerMirrored() : WorkerJobTest("mwms") {}

  // Starts worker w of `configs` with `scenario`.
  // "nccl_fit": worker w on /gpu:w.
  int start(WorkerProcesses& job, const std::vector<std::string>& configs, int w,
            const std::string& scenario) {
    std::vector<std::string> env = {"TF_CONFIG=" + configs[size_t(w)],
                                    std::string(kScenario) + "=" + scenario,
                                    std::string(kOut) + "=" + out(w)};
    if (scenario == "nccl_fit") env.push_back(std::string(kGpu) + "=" + std::to_string(w));
    if (scenario.rfind("tfrecord", 0) == 0) env.push_back(std::string(kDataDir) + "=" + dir_);
    return job.start(kChildTest, env, log(w));
  }

  // Runs `workers` workers of `scenario` to the end; each must succeed.
  std::vector<RunResult> run_job(int workers, const std::string& scenario) {
    WorkerProcesses job;
    const std::vector<std::string> configs = tf_configs(workers);
    for (int w = 0; w < workers; ++w) start(job, configs, w, scenario);
    std::vector<RunResult> results;
    for (int w = 0; w < workers; ++w) {
      const ChildExit e = job.wait(w, 120);
      EXPECT_TRUE(e.exited && e.code == 0) << "worker " << w << " failed:\n" << job.log(w);
      results.push_back(read_result(out(w)));
    }
    return results;
  }

};

void expect_same_run(const RunResult& got, const RunResult& want, const std::string& who) {
  SCOPED_TRACE(who);
  ASSERT_EQ(got.weights.size(), want.weights.size());
  for (size_t w = 0; w < want.weights.size(); ++w) {
    ASSERT_EQ(got.weights[w].size(), want.weights[w].size());
    for (size_t i = 0; i < want.weights[w].size(); ++i) {
      ASSERT_NEAR(got.weights[w][i], want.weights[w][i], 1e-6 + 1e-5 * std::fabs(want.weights[w][i]))
          << "weight " << w << " element " << i;
    }
  }
  ASSERT_EQ(got.loss.size(), want.loss.size());
  for (size_t i = 0; i < want.loss.size(); ++i) EXPECT_NEAR(got.loss[i], want.loss[i], 1e-5 * std::fabs(want.loss[i]) + 1e-6);
  ASSERT_EQ(got.accuracy.size(), want.accuracy.size());
  for (size_t i = 0; i < want.accuracy.size(); ++i) EXPECT_NEAR(got.accuracy[i], want.accuracy[i], 1e-6);
  ASSERT_EQ(got.predictions.size(), want.predictions.size());
  for (size_t i = 0; i < want.predictions.size(); ++i) {
    ASSERT_NEAR(got.predictions[i], want.predictions[i], 1e-4 + 1e-4 * std::fabs(want.predictions[i]));
  }
}

TEST_F(MultiWorkerMirrored, TwoWorkersFitLikeOneProcessOnTheGlobalBatch) {
  const RunResult reference = train_with_fit(nullptr);
  ASSERT_EQ(reference.accuracy.size(), 2u);
  const std::vector<RunResult> workers = run_job(2, "fit");
  for (size_t w = 0; w < workers.size(); ++w) expect_same_run(workers[w], reference, "worker " + std::to_string(w));
}

TEST_F(MultiWorkerMirrored, ThreeWorkersFitLikeOneProcessOnTheGlobalBatch) {
  const RunResult reference = train_with_fit(nullptr);
  const std::vector<RunResult> workers = run_job(3, "fit");
  for (size_t w = 0; w < workers.size(); ++w) expect_same_run(workers[w], reference, "worker " + std::to_string(w));
}

// Model.fit on a dataset of TFRecord files: each worker reads only its own files (parts 0 and 2,
// parts 1 and 3) in batches of half the global batch; the training equals one process reading
// every file, whose batches are the two workers' of each step together.
TEST_F(MultiWorkerMirrored, TwoWorkersFitOnTFRecordFilesDividedByFileLikeOneProcess) {
  write_classifier_records(dir_);
  const RunResult reference = train_on_records(nullptr, dir_);
  ASSERT_EQ(reference.loss.size(), 2u);
  const std::vector<RunResult> workers = run_job(2, "tfrecord_fit");
  for (size_t w = 0; w < workers.size(); ++w) expect_same_run(workers[w], reference, "worker " + std::to_string(w));
}

// Three files over two workers: worker 0 reads two, worker 1 one, so worker 1's data ends two
// steps early. Both fail naming it (no hang in a collective worker 0 would wait in alone).
TEST_F(MultiWorkerMirrored, FilesThatEndEarlierOnOneWorkerAreAnErrorNamingIt) {
  write_classifier_records(dir_);
  std::filesystem::remove(dir_ + "/part-3.tfrecord");
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(2);
  for (int w = 0; w < 2; ++w) start(job, configs, w, "tfrecord_uneven");
  for (int w = 0; w < 2; ++w) {
    const ChildExit e = job.wait(w, 60);
    EXPECT_TRUE(e.exited && e.code != 0) << job.log(w);
    EXPECT_NE(job.log(w).find("divided among the workers by file"), std::string::npos) << job.log(w);
    EXPECT_NE(job.log(w).find("the datasets of worker 1 (localhost:"), std::string::npos) << job.log(w);
  }
}

// Every fit step (2 epochs x 4) sends its state (metric sums, random offsets, termination
// flags; BatchNormalization's statistics in the next test) inside its last gradient all-reduce:
// one collective a step. predict's steps (3) exchange theirs on their own.
void expect_every_fit_step_folded(const RunResult& r, const std::string& who) {
  ASSERT_EQ(r.exchanges.size(), 2u) << who;
  EXPECT_EQ(r.exchanges[0], 8.0f) << who << ": steps whose state rode on the last bucket";
  EXPECT_EQ(r.exchanges[1], 3.0f) << who << ": separate exchanges (predict's 3 batches)";
}

TEST_F(MultiWorkerMirrored, ThreeWorkersFoldTheirStepStateIntoTheLastGradientBucket) {
  const std::vector<RunResult> workers = run_job(3, "fit");
  for (size_t w = 0; w < workers.size(); ++w) expect_every_fit_step_folded(workers[w], "worker " + std::to_string(w));
}

// Many buckets all-reduced during the backward pass (64 bytes: one per gradient, the first
// started after the last layer's) give the results of one bucket after it: the same sums.
TEST_F(MultiWorkerMirrored, GradientBucketsDuringTheBackwardPassDoNotChangeTheResults) {
  const RunResult reference = train_with_fit(nullptr);
  const std::vector<RunResult> workers = run_job(2, "fit_buckets");
  for (size_t w = 0; w < workers.size(); ++w) {
    expect_same_run(workers[w], reference, "worker " + std::to_string(w));
    expect_every_fit_step_folded(workers[w], "worker " + std::to_string(w));
  }
}

// BatchNormalization normalizes each replica's batch, so the reference is MirroredStrategy over
// as many replicas in one process; its moving statistics (the mean over the replicas, taken
// once per step across workers) and everything after them must agree. Adam: its bias
// correction reads the iteration count, which each worker keeps without a collective.
TEST_F(MultiWorkerMirrored, TwoWorkersWithBatchNormAndAdamFitLikeMirroredOverTwoReplicas) {
  config::set_logical_cpu_devices(2);
  RunResult reference;
  {
    distribute::MirroredStrategy mirrored(cpus(2));
    reference = train_with_fit(&mirrored, Norm::kBatchNorm, "adam");
  }
  config::set_logical_cpu_devices(1);
  const std::vector<RunResult> workers = run_job(2, "fit_bn");
  for (size_t w = 0; w < workers.size(); ++w) {
    expect_same_run(workers[w], reference, "worker " + std::to_string(w));
    expect_every_fit_step_folded(workers[w], "worker " + std::to_string(w));
  }
}

TEST_F(MultiWorkerMirrored, TwoWorkersCustomLoopLikeOneProcess) {
  const RunResult reference = train_custom_loop(nullptr);
  ASSERT_EQ(reference.loss.size(), 3u);
  const std::vector<RunResult> workers = run_job(2, "custom");
  for (size_t w = 0; w < workers.size(); ++w) expect_same_run(workers[w], reference, "worker " + std::to_string(w));
}

// Two workers, one GPU each, gradients in one NCCL communicator across the two processes (the
// unique id through the coordination service): both end with the same weights, those of the
// same training in one process (within GPU-vs-CPU rounding).
TEST_F(MultiWorkerMirrored, TwoWorkersOneGpuEachOverCrossProcessNccl) {
  if (gpu::device_count() < 2) GTEST_SKIP() << "GPU test: needs 2 GPUs, found " << gpu::device_count();
  if (!distribute::nccl_available()) GTEST_SKIP() << "GPU test: built without NCCL";
  const RunResult reference = train_with_fit(nullptr);
  const std::vector<RunResult> workers = run_job(2, "nccl_fit");
  ASSERT_EQ(workers[0].weights, workers[1].weights);
  ASSERT_EQ(workers[0].weights.size(), reference.weights.size());
  for (size_t w = 0; w < reference.weights.size(); ++w) {
    ASSERT_EQ(workers[0].weights[w].size(), reference.weights[w].size());
    for (size_t i = 0; i < reference.weights[w].size(); ++i) {
      EXPECT_NEAR(workers[0].weights[w][i], reference.weights[w][i],
                  1e-3 + 1e-3 * std::fabs(reference.weights[w][i]));
    }
  }
}

TEST_F(MultiWorkerMirrored, AutoShardOffWithShardedDatasetsLikeOneProcess) {
  const RunResult reference = train_custom_loop(nullptr);
  const std::vector<RunResult> workers = run_job(2, "off");
  for (size_t w = 0; w < workers.size(); ++w) expect_same_run(workers[w], reference, "worker " + std::to_string(w));
}

TEST_F(MultiWorkerMirrored, AutoShardOffRefusesTheSameDataAndUnevenEnds) {
  for (const std::string variant : {"off_unsharded", "off_uneven"}) {
    SCOPED_TRACE(variant);
    WorkerProcesses job;
    const std::vector<std::string> configs = tf_configs(2);
    for (int w = 0; w < 2; ++w) start(job, configs, w, variant);
    for (int w = 0; w < 2; ++w) {
      const ChildExit e = job.wait(w, 60);
      EXPECT_TRUE(e.exited && e.code != 0) << job.log(w);
      EXPECT_NE(job.log(w).find(variant == "off_unsharded" ? "first batch is the same (8 samples on each of the 2 workers)"
                                                           : "the datasets of worker 1 (localhost:"),
                std::string::npos)
          << job.log(w);
    }
  }
}

TEST(MultiWorkerInput, FilePolicyAndTooSmallBatchesAreErrors) {
  distribute::InProcessGroup group(2);
  InProcessWorker worker(1, 2, group.communicator(1));
  const ClassifierData d = classifier_data(10);
  const data::Dataset slices = data::Dataset::from_tensor_slices({d.x, d.y});
  expect_error<ValueError>(
      [&] { worker.experimental_distribute_dataset(slices.batch(4), distribute::AutoShardPolicy::kFile); },
      {"AutoShardPolicy::kFile", "reads no files", "kData"});
  auto it = worker.experimental_distribute_dataset(slices.batch(1)).make_iterator();
  expect_error<ValueError>([&] { it->next(); }, {"global batch of 1 sample(s)", "leaves worker 1 of 2"});
  // kData (and kAuto): worker 1 keeps the second half of each global batch.
  auto parts = worker.experimental_distribute_dataset(slices.batch(4), distribute::AutoShardPolicy::kData)
                   .make_iterator();
  std::optional<distribute::DistributedBatch> b = parts->next();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->global_size, 4);
  EXPECT_EQ(b->per_replica[0][0].to_vector<float>(), d.x.slice(2, 4).to_vector<float>());
}

// kAuto picks kFile for a dataset of files: worker 1 of 2 reads parts 1 and 3 only, in batches
// of half the global batch; kData keeps every file and its half of each global batch.
TEST(MultiWorkerInput, AutoDividesADatasetOfFilesByFile) {
  distribute::InProcessGroup group(2);
  InProcessWorker worker(1, 2, group.communicator(1));
  const std::string dir = ::testing::TempDir() + "mwms_files_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  write_classifier_records(dir);
  const ClassifierData d = classifier_data(kSamples);
  const int64_t per_file = kSamples / kRecordFiles;
  for (auto policy : {distribute::AutoShardPolicy::kAuto, distribute::AutoShardPolicy::kFile}) {
    SCOPED_TRACE(distribute::auto_shard_policy_name(policy));
    auto it = worker.experimental_distribute_dataset(classifier_records(dir, 1, 1), policy).make_iterator();
    std::vector<float> seen;
    while (std::optional<distribute::DistributedBatch> b = it->next()) {
      EXPECT_EQ(b->per_replica[0][0].dim(0), kBatch / 2);
      const std::vector<float> x = b->per_replica[0][0].to_vector<float>();
      seen.insert(seen.end(), x.begin(), x.end());
    }
    std::vector<float> want = d.x.slice(per_file, 2 * per_file).to_vector<float>();
    const std::vector<float> part3 = d.x.slice(3 * per_file, 4 * per_file).to_vector<float>();
    want.insert(want.end(), part3.begin(), part3.end());
    EXPECT_EQ(seen, want);
  }
  auto data_it = worker.experimental_distribute_dataset(classifier_records(dir, 1, 1),
                                                        distribute::AutoShardPolicy::kData)
                     .make_iterator();
  std::optional<distribute::DistributedBatch> b = data_it->next();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->global_size, kBatch);
  EXPECT_EQ(b->per_replica[0][0].to_vector<float>(), d.x.slice(kBatch / 2, kBatch).to_vector<float>());
  std::filesystem::remove_all(dir);
}

TEST_F(MultiWorkerMirrored, WorkersStartedInReverseOrderFiveSecondsApart) {
  const RunResult reference = train_with_fit(nullptr);
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(2);
  start(job, configs, 1, "fit");  // the chief (worker 0, host of the service) comes last
  std::this_thread::sleep_for(std::chrono::seconds(5));
  start(job, configs, 0, "fit");
  for (int slot = 0; slot < 2; ++slot) {
    const ChildExit e = job.wait(slot, 120);
    EXPECT_TRUE(e.exited && e.code == 0) << job.log(slot);
  }
  expect_same_run(read_result(out(0)), reference, "worker 0");
  expect_same_run(read_result(out(1)), reference, "worker 1");
}

TEST_F(MultiWorkerMirrored, KilledWorkerMakesTheOthersFailNamingIt) {
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(3);
  for (int w = 0; w < 3; ++w) start(job, configs, w, "long");
  // Training is under way once worker 0 finished an epoch.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (read_file_text(out(0)).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(read_file_text(out(0)).empty()) << job.log(0);
  job.kill(2, SIGKILL);
  for (int w : {0, 1}) {
    const ChildExit e = job.wait(w, 30);
    EXPECT_TRUE(e.exited) << "worker " << w << " did not stop within 30 s of worker 2's death\n" << job.log(w);
    EXPECT_NE(e.code, 0);
    EXPECT_NE(job.log(w).find("worker 2 (localhost:"), std::string::npos) << job.log(w);
  }
}

TEST_F(MultiWorkerMirrored, KilledMidEpochThenRestartedResumesFromTheBackup) {
  const std::string uninterrupted = dir_ + "/backup_uninterrupted", resumed = dir_ + "/backup";
  auto run = [&](const std::string& backup, const std::string& kill_at) {
    WorkerProcesses job;
    const std::vector<std::string> configs = tf_configs(2);
    for (int w = 0; w < 2; ++w) {
      job.start(kChildTest,
                {"TF_CONFIG=" + configs[size_t(w)], std::string(kScenario) + "=backup",
                 std::string(kOut) + "=" + out(w), std::string(kBackupDir) + "=" + backup,
                 std::string(kKillAt) + "=" + kill_at},
                log(w));
    }
    std::vector<ChildExit> exits;
    for (int w = 0; w < 2; ++w) exits.push_back(job.wait(w, 60));
    return std::make_pair(exits, std::vector<std::string>{job.log(0), job.log(1)});
  };
  // The job without a failure.
  auto [clean, clean_logs] = run(uninterrupted, "");
  for (int w = 0; w < 2; ++w) ASSERT_TRUE(clean[size_t(w)].exited && clean[size_t(w)].code == 0) << clean_logs[size_t(w)];
  const RunResult want = read_result(out(0));
  ASSERT_EQ(want.loss.size(), 4u);
  std::filesystem::remove(out(0));
  // Worker 1 dies in the third epoch (after the backup of the second); worker 0 stops naming it.
  auto [killed, killed_logs] = run(resumed, "1:2:1");
  EXPECT_EQ(killed[1].signal, SIGKILL) << killed_logs[1];
  EXPECT_TRUE(killed[0].exited && killed[0].code != 0) << killed_logs[0];
  EXPECT_NE(killed_logs[0].find("worker 1 (localhost:"), std::string::npos) << killed_logs[0];
  // The whole job started again resumes at epoch 3 and ends with the uninterrupted weights.
  auto [again, again_logs] = run(resumed, "");
  for (int w = 0; w < 2; ++w) ASSERT_TRUE(again[size_t(w)].exited && again[size_t(w)].code == 0) << again_logs[size_t(w)];
  for (int w = 0; w < 2; ++w) {
    const RunResult got = read_result(out(w));
    EXPECT_EQ(got.loss.size(), 2u) << "the resumed run trains epochs 3 and 4 only";
    ASSERT_EQ(got.weights.size(), want.weights.size());
    for (size_t k = 0; k < want.weights.size(); ++k) {
      for (size_t i = 0; i < want.weights[k].size(); ++i) {
        ASSERT_NEAR(got.weights[k][i], want.weights[k][i], 1e-6 + 1e-5 * std::fabs(want.weights[k][i]))
            << "worker " << w << " weight " << k << " element " << i;
      }
    }
  }
}

TEST_F(MultiWorkerMirrored, MissingWorkerIsNamedAfterTheRegisterTimeout) {
  // Worker 1 never starts: worker 0 gives up after register_timeout (5 s), naming it.
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(2);
  start(job, configs, 0, "lonely");
  const ChildExit e = job.wait(0, 60);
  EXPECT_TRUE(e.exited) << job.log(0);
  EXPECT_NE(e.code, 0);
  EXPECT_NE(job.log(0).find("worker 1 (localhost:"), std::string::npos) << job.log(0);
}

TEST(MultiWorkerMirroredSingle, OneWorkerOrNoClusterBehavesAsMirrored) {
  config::set_logical_cpu_devices(2);
  // A cluster of one worker: no coordination, the local devices only.
  distribute::ClusterSpec spec(std::map<std::string, std::vector<std::string>>{{"worker", {"localhost:1"}}});
  auto resolver = std::make_shared<distribute::SimpleClusterResolver>(
      spec, distribute::SimpleClusterResolverOptions().task_type("worker").task_id(0));
  distribute::MultiWorkerMirroredStrategy strategy(resolver, {}, cpus(2));
  EXPECT_EQ(strategy.num_workers(), 1);
  EXPECT_EQ(strategy.num_replicas_in_sync(), 2);
  EXPECT_TRUE(strategy.is_chief());
  distribute::MirroredStrategy mirrored(cpus(2));
  const ClassifierData d = classifier_data(48);
  std::vector<std::vector<float>> got, want;
  for (distribute::Strategy* s : {static_cast<distribute::Strategy*>(&strategy),
                                  static_cast<distribute::Strategy*>(&mirrored)}) {
    std::shared_ptr<Sequential> model;
    {
      auto scope = s->scope();
      model = small_classifier();
    }
    model->fit(d.x, d.y, FitOptions().batch_size(16).epochs(1).verbose(0));
    (s == &strategy ? got : want) = flat_weights(*model);
  }
  EXPECT_EQ(got, want);
  config::set_logical_cpu_devices(1);
}

TEST(MultiWorkerMirroredSingle, TasksOutsideTheTrainingClusterAreRefused) {
  distribute::ClusterSpec spec(std::map<std::string, std::vector<std::string>>{
      {"worker", {"localhost:1", "localhost:2"}}, {"ps", {"localhost:3"}}});
  auto ps = std::make_shared<distribute::SimpleClusterResolver>(
      spec, distribute::SimpleClusterResolverOptions().task_type("ps").task_id(0));
  expect_error<ValueError>([&] { distribute::MultiWorkerMirroredStrategy s(ps); },
                                 {"ps 0", "ParameterServerStrategy"});
  expect_error<ValueError>(
      [&] {
        distribute::MultiWorkerMirroredStrategy s(
            nullptr, distribute::CommunicationOptions().timeout_seconds(0));
      },
      {"timeout_seconds", "> 0"});
  // The elastic job's batch options without an elastic job: say what makes it one.
  expect_error<ValueError>(
      [&] {
        distribute::MultiWorkerMirroredStrategy s(
            nullptr, distribute::CommunicationOptions().elastic(
                         distribute::ElasticOptions().keep_per_replica_batch(true)));
      },
      {"keep_per_replica_batch", "min_workers is 0", "set min_workers"});
}

}  // namespace
}  // namespace strata::testing
