// SidecarEvaluator: the `evaluator` task of a parameter-server cluster (TensorFlow's
// tf.keras.utils.SidecarEvaluator). It watches the directory the chief's ModelCheckpoint writes
// into, loads every new checkpoint into its own copy of the model, evaluates it and writes the
// results as TensorBoard scalars:
//
//   model->compile("sgd", "mse", {"mae"});                     // the training model's twin
//   SidecarEvaluator evaluator(model, eval_data, "ckpt/",
//                              SidecarEvaluatorOptions().max_evaluations(10).log_dir("logs"));
//   for (const auto& e : evaluator.start()) ...                // one entry per checkpoint
//
// What counts as a checkpoint: a file directly in checkpoint_dir ending in ".h5", ".hdf5" or
// ".keras" (or a ".keras" directory), i.e. what ModelCheckpoint writes with save_weights_only
// (Keras 2 .h5, Keras 3 .weights.h5) or without (a full .h5 / .keras model). Hidden files (the
// ".<name>.tmp-*" files of an atomic save in progress) and subdirectories (other workers'
// workertemp_*) are not. A checkpoint is new when its path or its modification time was not seen
// before, so a fixed-name ModelCheckpoint that rewrites one file is evaluated at every save.
//
// Differences from TensorFlow, and why:
// - Every checkpoint is evaluated once, oldest first (modification time, then name). TensorFlow's
//   checkpoints_iterator yields only the newest, skipping those saved while it evaluated; a
//   ModelCheckpoint directory keeps every file, so none needs skipping.
// - The end: after max_evaluations evaluations. TensorFlow stops after the checkpoint whose name
//   ends in "-<max_evaluations>"; with one "ckpt-{epoch}" file per epoch that is the same one,
//   but a count does not depend on how the name is formatted ({epoch:02d}, TensorFlow's own
//   TODO). A skipped (corrupt) file is not counted. It also ends (with max_evaluations -1,
//   TensorFlow's None, only so) when timeout_seconds pass without a new checkpoint: start()
//   returns what it evaluated, a clean end (TensorFlow's checkpoints_iterator timeout), or, when it has evaluated
//   nothing at all, throws an IOError naming the directory (a wrong path, or a trainer that never
//   saved, should not look like success). timeout_seconds -1 waits forever, as TensorFlow does.
// - The summary step is the first integer in the file name (ModelCheckpoint's {epoch}), else the
//   evaluation's 1-based count: Strata's weights files do not carry the optimizer's iteration
//   count, which TensorFlow's checkpoints do. The tags are TensorFlow's (its TensorBoard callback
//   passed to evaluate): "evaluation_<metric>_vs_iterations" in "<log_dir>/validation".
// - A checkpoint that fails to load (IOError or ValueError: half-written by a writer that is not
//   atomic, or corrupt) is retried at the next poll, keeping the order; after max_load_attempts
//   failures it is skipped with a message naming it (TensorFlow retries forever). Other errors
//   (a model that does not match the files: ShapeError, ...) end start().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/callbacks/callback.h"
#include "framework/data/dataset.h"

namespace strata {
class Model;
namespace summary {
class SummaryWriter;
}
}  // namespace strata

namespace strata::distribute {

struct SidecarEvaluatorOptions {
  int64_t steps_ = -1;            // batches per evaluation; -1: the whole dataset
  int64_t max_evaluations_ = -1;  // -1: until the timeout (TensorFlow's None)
  std::vector<CallbackPtr> callbacks_;  // passed to every model->evaluate
  std::string log_dir_;                 // "": no summaries
  double poll_interval_seconds_ = 1.0;  // between directory scans when nothing is new
  double timeout_seconds_ = -1;         // without a new checkpoint; -1: forever
  int max_load_attempts_ = 3;           // per checkpoint, before it is skipped
  int verbose_ = 0;                     // model->evaluate's progress bar
  // Where the one-line messages go (an evaluation, a retry, a skip, the end); default: stderr.
  std::function<void(const std::string&)> log_;

  SidecarEvaluatorOptions& steps(int64_t v) { steps_ = v; return *this; }
  SidecarEvaluatorOptions& max_evaluations(int64_t v) { max_evaluations_ = v; return *this; }
  SidecarEvaluatorOptions& callbacks(std::vector<CallbackPtr> v) {
    callbacks_ = std::move(v);
    return *this;
  }
  SidecarEvaluatorOptions& log_dir(std::string v) { log_dir_ = std::move(v); return *this; }
  SidecarEvaluatorOptions& poll_interval_seconds(double v) {
    poll_interval_seconds_ = v;
    return *this;
  }
  SidecarEvaluatorOptions& timeout_seconds(double v) { timeout_seconds_ = v; return *this; }
  SidecarEvaluatorOptions& max_load_attempts(int v) { max_load_attempts_ = v; return *this; }
  SidecarEvaluatorOptions& verbose(int v) { verbose_ = v; return *this; }
  SidecarEvaluatorOptions& log(std::function<void(const std::string&)> v) {
    log_ = std::move(v);
    return *this;
  }
};

// One evaluated checkpoint.
struct SidecarEvaluation {
  std::string checkpoint;                 // its path
  int64_t step = 0;                       // the summary step (see above)
  std::map<std::string, double> metrics;  // model->evaluate's result
};

class SidecarEvaluator {
 public:
  // ValueError for a null or uncompiled model (evaluate needs its loss and metrics), an empty
  // checkpoint_dir, or an option out of range (steps and max_evaluations: -1 or >= 1;
  // poll_interval_seconds > 0; timeout_seconds -1 or >= 0; max_load_attempts >= 1).
  SidecarEvaluator(std::shared_ptr<Model> model, data::Dataset data, std::string checkpoint_dir,
                   SidecarEvaluatorOptions options = {});
  ~SidecarEvaluator();

  // Runs the loop described above and returns the evaluations in order. IOError when the
  // timeout passes before any checkpoint was evaluated, or when log_dir cannot be written.
  std::vector<SidecarEvaluation> start();

  // The checkpoints skipped after max_load_attempts failures, in order.
  const std::vector<std::string>& skipped() const { return skipped_; }

 private:
  enum class Loaded { kYes, kRetry, kSkipped };
  // Loads the checkpoint `path`, known as `key` (its path and modification time) in failures_.
  Loaded load(const std::string& path, const std::string& key);
  void write_summaries(const SidecarEvaluation& evaluation);
  void say(const std::string& line) const;

  std::shared_ptr<Model> model_;
  data::Dataset data_;
  std::string checkpoint_dir_;
  SidecarEvaluatorOptions options_;
  std::shared_ptr<summary::SummaryWriter> writer_;
  std::map<std::string, int> failures_;  // load failures per checkpoint key
  std::vector<std::string> skipped_;
};

}  // namespace strata::distribute
