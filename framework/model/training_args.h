// Arguments of compile / fit / evaluate / predict, with Keras' names and defaults. Options
// structs use chained setters: FitOptions().epochs(5).batch_size(128).validation_split(0.1).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "framework/data/dataset.h"
#include "framework/callbacks/callback.h"
#include "framework/core/tensor.h"

namespace strata {

namespace optimizers {
class Optimizer;
}
namespace losses {
class Loss;
}
namespace metrics {
class Metric;
}

// A Keras string shortcut ("adam") or an object.
struct OptimizerArg {
  std::string name;
  std::shared_ptr<optimizers::Optimizer> object;
  OptimizerArg(const char* n) : name(n) {}                // NOLINT
  OptimizerArg(std::string n) : name(std::move(n)) {}     // NOLINT
  template <typename T>
  OptimizerArg(std::shared_ptr<T> o) : object(std::move(o)) {}  // NOLINT
};

struct LossArg {
  std::string name;
  std::shared_ptr<losses::Loss> object;
  LossArg(const char* n) : name(n) {}             // NOLINT
  LossArg(std::string n) : name(std::move(n)) {}  // NOLINT
  template <typename T>
  LossArg(std::shared_ptr<T> l) : object(std::move(l)) {}  // NOLINT
};

struct MetricArg {
  std::string name;
  std::shared_ptr<metrics::Metric> object;
  MetricArg(const char* n) : name(n) {}             // NOLINT
  MetricArg(std::string n) : name(std::move(n)) {}  // NOLINT
  template <typename T>
  MetricArg(std::shared_ptr<T> m) : object(std::move(m)) {}  // NOLINT
};

struct CompileOptions {
  OptimizerArg optimizer_ = "rmsprop";
  std::vector<LossArg> loss_;          // one for all outputs, or one per output
  std::vector<MetricArg> metrics_;     // applied to every output
  std::vector<double> loss_weights_;   // one per output
  int steps_per_execution_ = 1;
  // Keras' auto_scale_loss: under a "mixed_float16" policy the optimizer is wrapped in a
  // LossScaleOptimizer (unless it is one already).
  bool auto_scale_loss_ = true;
  // TensorFlow's pss_evaluation_shards, for evaluate(DatasetCreator) under
  // ParameterServerStrategy: 0 evaluates on this task (no visitation guarantee); n > 0 cuts the
  // evaluation data into n shards, each evaluated whole by one closure on a worker and counted
  // exactly once even when a worker fails (the shard runs again elsewhere, from scratch);
  // kAutoEvaluationShards ("auto") is 5 shards per worker, as TensorFlow's.
  static constexpr int64_t kAutoEvaluationShards = -1;
  int64_t pss_evaluation_shards_ = 0;

  CompileOptions& optimizer(OptimizerArg o) { optimizer_ = std::move(o); return *this; }
  CompileOptions& loss(LossArg l) { loss_ = {std::move(l)}; return *this; }
  CompileOptions& loss(std::vector<LossArg> l) { loss_ = std::move(l); return *this; }
  CompileOptions& metrics(std::vector<MetricArg> m) { metrics_ = std::move(m); return *this; }
  CompileOptions& loss_weights(std::vector<double> w) { loss_weights_ = std::move(w); return *this; }
  CompileOptions& steps_per_execution(int n) { steps_per_execution_ = n; return *this; }
  CompileOptions& auto_scale_loss(bool b) { auto_scale_loss_ = b; return *this; }
  CompileOptions& pss_evaluation_shards(int64_t n) { pss_evaluation_shards_ = n; return *this; }
  // "auto" (any other text is a ValueError at compile).
  CompileOptions& pss_evaluation_shards(const std::string& s) {
    pss_evaluation_shards_ = s == "auto" ? kAutoEvaluationShards : -2;
    return *this;
  }
};

struct FitOptions {
  int64_t batch_size_ = 32;
  int epochs_ = 1;
  int verbose_ = 1;  // 0 silent, 1 progress bar, 2 one line per epoch
  std::vector<CallbackPtr> callbacks_;
  double validation_split_ = 0.0;
  std::optional<std::pair<Tensor, Tensor>> validation_data_;
  std::optional<data::Dataset> validation_dataset_;
  bool shuffle_ = true;
  std::map<int64_t, double> class_weight_;
  Tensor sample_weight_;
  int initial_epoch_ = 0;
  int64_t steps_per_epoch_ = -1;  // -1: one pass over the data
  int64_t validation_steps_ = -1;
  int validation_freq_ = 1;

  FitOptions& batch_size(int64_t v) { batch_size_ = v; return *this; }
  FitOptions& epochs(int v) { epochs_ = v; return *this; }
  FitOptions& verbose(int v) { verbose_ = v; return *this; }
  FitOptions& callbacks(std::vector<CallbackPtr> v) { callbacks_ = std::move(v); return *this; }
  FitOptions& validation_split(double v) { validation_split_ = v; return *this; }
  FitOptions& validation_data(Tensor x, Tensor y) { validation_data_ = {{std::move(x), std::move(y)}}; return *this; }
  FitOptions& validation_data(data::Dataset ds) { validation_dataset_ = std::move(ds); return *this; }
  FitOptions& shuffle(bool v) { shuffle_ = v; return *this; }
  FitOptions& class_weight(std::map<int64_t, double> v) { class_weight_ = std::move(v); return *this; }
  FitOptions& sample_weight(Tensor v) { sample_weight_ = std::move(v); return *this; }
  FitOptions& initial_epoch(int v) { initial_epoch_ = v; return *this; }
  FitOptions& steps_per_epoch(int64_t v) { steps_per_epoch_ = v; return *this; }
  FitOptions& validation_steps(int64_t v) { validation_steps_ = v; return *this; }
  FitOptions& validation_freq(int v) { validation_freq_ = v; return *this; }
};

struct EvaluateOptions {
  int64_t batch_size_ = 32;
  int verbose_ = 1;
  Tensor sample_weight_;
  int64_t steps_ = -1;
  std::vector<CallbackPtr> callbacks_;

  EvaluateOptions& batch_size(int64_t v) { batch_size_ = v; return *this; }
  EvaluateOptions& verbose(int v) { verbose_ = v; return *this; }
  EvaluateOptions& sample_weight(Tensor v) { sample_weight_ = std::move(v); return *this; }
  EvaluateOptions& steps(int64_t v) { steps_ = v; return *this; }
  EvaluateOptions& callbacks(std::vector<CallbackPtr> v) { callbacks_ = std::move(v); return *this; }
};

struct PredictOptions {
  int64_t batch_size_ = 32;
  int verbose_ = 0;
  int64_t steps_ = -1;
  std::vector<CallbackPtr> callbacks_;

  PredictOptions& batch_size(int64_t v) { batch_size_ = v; return *this; }
  PredictOptions& verbose(int v) { verbose_ = v; return *this; }
  PredictOptions& steps(int64_t v) { steps_ = v; return *this; }
  PredictOptions& callbacks(std::vector<CallbackPtr> v) { callbacks_ = std::move(v); return *this; }
};

}  // namespace strata
