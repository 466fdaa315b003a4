// strata_elastic_bench: a small classifier trained with Model::fit under
// MultiWorkerMirroredStrategy (TF_CONFIG from the environment), elastic or not, logging every
// completed step so that bench/elastic_compare.sh and bench/elastic_chaos.sh can tell when a job
// that lost a worker trains again, which steps were run twice, and whether the final model is
// the one a job without failures makes.
//
//   strata_elastic_bench [--elastic_min_workers 0] [--epochs 4] [--steps_per_epoch 50]
//                        [--batch_size 96] [--step_log FILE] [--backup_dir DIR]
//                        [--backup_freq 5] [--step_sleep_ms 0] [--features 32] [--classes 8]
//                        [--hidden 64] [--learning_rate 0.05] [--test_samples 4000]
//                        [--heartbeat_timeout_seconds 0] [--timeout_seconds 0]
//                        [--start_grace_seconds -1] [--seed 1] [--marker TEXT]
//
// Data: a fixed random "teacher" (two random layers, tanh between) labels Gaussian inputs with
// the argmax of its logits plus noise; the training set (epochs x steps_per_epoch x batch_size
// samples, of which each epoch takes steps_per_epoch shuffled batches) and the held-out set come from fixed seeds, the same
// in every process, so every worker, every restart and the failure-free reference train on the
// same global batches. Model: features -> Dense(hidden, relu) -> Dense(hidden, relu) ->
// Dense(classes) (logits), SGD with momentum 0.9. No validation during fit (fit's validation is
// not elastic).
//
// --elastic_min_workers N > 0: CommunicationOptions().elastic(ElasticOptions().min_workers(N)).
// --step_log FILE: every completed training step appends one line
//     <unix time, s, ms precision> <epoch> <step> <optimizer iterations> <task> <pid>
//   (system_clock, comparable across processes); "{task}" in FILE is replaced by this process's
//   task ("worker2"), so each task may write its own file.
// --backup_dir DIR: BackupAndRestore(DIR) with save_freq --backup_freq batches (the restart
//   baseline: the whole job started again resumes from the chief's last backup).
// --step_sleep_ms MS: each step sleeps MS after it completes (on_train_batch_end), on every
//   worker, to make a job last long enough to be killed in.
// --marker TEXT: ignored; lets a script find the job's processes (pgrep -f TEXT).
// At the end, every process evaluates the trained weights on the held-out set in a model of its
// own (no collective, so the end of the job is never waiting on a worker) and prints
//   RESULT task=worker0 accuracy=0.8850 loss=0.3312 iterations=200 expected=200 steps=200
//          taken_over=0 reformations=1 synchronizations=2 batches_seen=200 seconds=21.4
// steps / taken_over / reformations / synchronizations: elastic_counts() (0 when not elastic);
// batches_seen: the steps this process's fit reported (on_train_batch_end).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.h>

namespace {

using namespace strata;

struct Args {
  int elastic_min_workers = 0;
  int epochs = 4;
  int64_t steps_per_epoch = 50;
  int64_t batch_size = 96;
  std::string step_log, backup_dir, marker;
  int64_t backup_freq = 5;
  int64_t step_sleep_ms = 0;
  int64_t features = 32, classes = 8, hidden = 64, test_samples = 4000;
  double learning_rate = 0.05;
  double heartbeat_timeout_seconds = 0, timeout_seconds = 0, start_grace_seconds = -1;
  uint64_t seed = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i], value;
    if (const size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else {
      if (i + 1 >= argc) throw ValueError("strata_elastic_bench: " + flag + " needs a value");
      value = argv[++i];
    }
    if (flag == "--elastic_min_workers") a.elastic_min_workers = std::stoi(value);
    else if (flag == "--epochs") a.epochs = std::stoi(value);
    else if (flag == "--steps_per_epoch") a.steps_per_epoch = std::stoll(value);
    else if (flag == "--batch_size") a.batch_size = std::stoll(value);
    else if (flag == "--step_log") a.step_log = value;
    else if (flag == "--backup_dir") a.backup_dir = value;
    else if (flag == "--backup_freq") a.backup_freq = std::stoll(value);
    else if (flag == "--step_sleep_ms") a.step_sleep_ms = std::stoll(value);
    else if (flag == "--features") a.features = std::stoll(value);
    else if (flag == "--classes") a.classes = std::stoll(value);
    else if (flag == "--hidden") a.hidden = std::stoll(value);
    else if (flag == "--test_samples") a.test_samples = std::stoll(value);
    else if (flag == "--learning_rate") a.learning_rate = std::stod(value);
    else if (flag == "--heartbeat_timeout_seconds") a.heartbeat_timeout_seconds = std::stod(value);
    else if (flag == "--timeout_seconds") a.timeout_seconds = std::stod(value);
    else if (flag == "--start_grace_seconds") a.start_grace_seconds = std::stod(value);
    else if (flag == "--seed") a.seed = std::stoull(value);
    else if (flag == "--marker") a.marker = value;
    else throw ValueError("strata_elastic_bench: unknown flag " + flag);
  }
  if (a.epochs < 1 || a.steps_per_epoch < 1 || a.batch_size < 1 || a.backup_freq < 1 ||
      a.features < 1 || a.classes < 2 || a.hidden < 1 || a.test_samples < 1 ||
      a.elastic_min_workers < 0 || a.step_sleep_ms < 0) {
    throw ValueError("strata_elastic_bench: --epochs, --steps_per_epoch, --batch_size, "
                     "--backup_freq, --features, --hidden, --test_samples must be >= 1, "
                     "--classes >= 2, --elastic_min_workers and --step_sleep_ms >= 0");
  }
  return a;
}

// The fixed teacher and a data set drawn from it: x ~ N(0, 1), y = argmax(tanh(x A) B + noise).
struct Teacher {
  int64_t features, classes, hidden = 16;
  std::vector<float> a, b;
  Teacher(int64_t f, int64_t c, uint64_t seed) : features(f), classes(c) {
    std::mt19937_64 gen(seed * 7919 + 17);
    std::normal_distribution<float> n(0.0f, 1.0f);
    a.resize(size_t(features * hidden));
    b.resize(size_t(hidden * classes));
    for (float& v : a) v = n(gen) / std::sqrt(float(features)) * 2.0f;
    for (float& v : b) v = n(gen);
  }
  std::pair<Tensor, Tensor> draw(int64_t samples, uint64_t seed) const {
    std::mt19937_64 gen(seed);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> x(size_t(samples * features));
    std::vector<int64_t> y(static_cast<size_t>(samples));
    std::vector<float> h(static_cast<size_t>(hidden)), logit(static_cast<size_t>(classes));
    for (int64_t i = 0; i < samples; ++i) {
      float* xi = &x[size_t(i * features)];
      for (int64_t k = 0; k < features; ++k) xi[k] = n(gen);
      for (int64_t j = 0; j < hidden; ++j) {
        float s = 0;
        for (int64_t k = 0; k < features; ++k) s += xi[k] * a[size_t(k * hidden + j)];
        h[size_t(j)] = std::tanh(s);
      }
      int64_t best = 0;
      for (int64_t c = 0; c < classes; ++c) {
        float s = 0.5f * n(gen);  // label noise: the best model is below 100%
        for (int64_t j = 0; j < hidden; ++j) s += h[size_t(j)] * b[size_t(j * classes + c)];
        logit[size_t(c)] = s;
        if (s > logit[size_t(best)]) best = c;
      }
      y[size_t(i)] = best;
    }
    return {Tensor::from_vector(x, Shape{samples, features}), Tensor::from_vector(y, Shape{samples})};
  }
};

std::shared_ptr<Sequential> build_model(const Args& a) {
  set_random_seed(a.seed + 1000);  // the same initial weights everywhere (the chief's win anyway)
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(a.hidden, "relu"),
      std::make_shared<Dense>(a.hidden, "relu"),
      std::make_shared<Dense>(a.classes),
  });
  model->build({-1, a.features});
  model->compile(CompileOptions()
                     .optimizer(std::make_shared<optimizers::SGD>(a.learning_rate, 0.9))
                     .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(true))
                     .metrics({"accuracy"}));
  return model;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One line per completed step (appended with one write(2), O_APPEND: whole lines even when
// several processes share the file), and the optional sleep.
class StepLog final : public Callback {
 public:
  StepLog(std::string path, std::string task, int64_t sleep_ms)
      : task_(std::move(task)), sleep_ms_(sleep_ms) {
    if (!path.empty()) {
      file_ = std::fopen(path.c_str(), "a");
      if (file_ == nullptr) throw IOError("strata_elastic_bench: cannot open --step_log " + path);
      setvbuf(file_, nullptr, _IOLBF, 0);
    }
  }
  ~StepLog() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  void on_epoch_begin(int epoch, const Logs&) override { epoch_ = epoch; }
  void on_train_batch_end(int batch, const Logs&) override {
    ++batches_seen_;
    if (file_ != nullptr) {
      const int64_t iterations = model()->optimizer()->iteration_count();
      std::fprintf(file_, "%.3f %d %d %lld %s %d\n", unix_now(), epoch_, batch,
                   static_cast<long long>(iterations), task_.c_str(), int(getpid()));
    }
    if (sleep_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
  }
  int64_t batches_seen() const { return batches_seen_; }

 private:
  std::string task_;
  int64_t sleep_ms_;
  std::FILE* file_ = nullptr;
  int epoch_ = 0;
  int64_t batches_seen_ = 0;
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

int run(const Args& a) {
  const auto start = std::chrono::steady_clock::now();
  // This process's task as TF_CONFIG names it (stable across re-formations and restarts).
  std::string task = "worker0";
  if (std::getenv("TF_CONFIG") != nullptr) {
    distribute::TFConfigClusterResolver resolver;
    task = resolver.task_type().value_or("worker") + std::to_string(resolver.task_id().value_or(0));
  }

  distribute::CommunicationOptions options;
  if (a.heartbeat_timeout_seconds > 0) options.heartbeat_timeout_seconds(a.heartbeat_timeout_seconds);
  if (a.timeout_seconds > 0) options.timeout_seconds(a.timeout_seconds);
  if (a.elastic_min_workers > 0) {
    distribute::ElasticOptions elastic;
    elastic.min_workers(a.elastic_min_workers);
    if (a.start_grace_seconds >= 0) elastic.start_grace_seconds(a.start_grace_seconds);
    options.elastic(elastic);
  }
  auto strategy = std::make_shared<distribute::MultiWorkerMirroredStrategy>(nullptr, options);

  const Teacher teacher(a.features, a.classes, a.seed);
  const int64_t samples = a.steps_per_epoch * a.batch_size * a.epochs;
  auto [x, y] = teacher.draw(samples, a.seed * 1000003 + 1);
  auto [x_test, y_test] = teacher.draw(a.test_samples, a.seed * 1000003 + 2);

  std::shared_ptr<Sequential> model;
  {
    auto scope = strategy->scope();
    model = build_model(a);
  }
  auto step_log = std::make_shared<StepLog>(replace_all(a.step_log, "{task}", task), task,
                                            a.step_sleep_ms);
  std::vector<CallbackPtr> callbacks{step_log};
  if (!a.backup_dir.empty()) {
    callbacks.push_back(std::make_shared<BackupAndRestore>(
        a.backup_dir, BackupAndRestoreOptions().save_freq(a.backup_freq)));
  }
  std::printf("%s: %s, %d worker(s)%s; global batch %lld, %d epoch(s) x %lld steps\n",
              task.c_str(), strategy->name().c_str(), strategy->num_workers(),
              a.elastic_min_workers > 0
                  ? (" elastic (min " + std::to_string(a.elastic_min_workers) + ")").c_str()
                  : "",
              static_cast<long long>(a.batch_size), a.epochs,
              static_cast<long long>(a.steps_per_epoch));
  std::fflush(stdout);
  // Each epoch is a new shuffled pass over epochs x steps_per_epoch batches of samples, of which
  // it takes the first steps_per_epoch batches.
  model->fit(x, y, FitOptions()
                       .batch_size(a.batch_size)
                       .epochs(a.epochs)
                       .steps_per_epoch(a.steps_per_epoch)
                       .callbacks(callbacks)
                       .verbose(0));
  const int64_t iterations = model->optimizer()->iteration_count();
  const auto counts = strategy->elastic_counts();

  // Held-out score of these weights in a model without the strategy: no collective at the end.
  const std::vector<Tensor> weights = model->get_weights();
  std::shared_ptr<Sequential> local = build_model(a);
  local->set_weights(weights);
  const auto scores = local->evaluate(x_test, y_test, EvaluateOptions().batch_size(500).verbose(0));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("RESULT task=%s accuracy=%.4f loss=%.4f iterations=%lld expected=%lld steps=%lld "
              "taken_over=%lld reformations=%lld synchronizations=%lld batches_seen=%lld "
              "seconds=%.1f\n",
              task.c_str(), scores.at("accuracy"), scores.at("loss"),
              static_cast<long long>(iterations),
              static_cast<long long>(a.epochs * a.steps_per_epoch),
              static_cast<long long>(counts.completed_steps),
              static_cast<long long>(counts.steps_taken_over),
              static_cast<long long>(counts.reformations),
              static_cast<long long>(counts.synchronizations),
              static_cast<long long>(step_log->batches_seen()), seconds);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const strata::distribute::JobFinishedError& e) {
    std::fprintf(stderr, "strata_elastic_bench: nothing to do: %s\n", e.what());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata_elastic_bench: %s\n", e.what());
    return 1;
  }
}
