// Model: Keras' Model. Three ways to make one, as in Keras:
//   - functional:  auto in = Input({784}); auto out = (*dense)(in); Model model(in, out);
//   - Sequential:  Sequential model({std::make_shared<Dense>(10)});   (sequential.h)
//   - subclassing: class MyModel : public Model { Tensor call(const Tensor& x, bool t) override; }
//                  (track() the layers it owns).
// and one training loop for all of them:
//   model.compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
//   History h = model.fit(x, y, FitOptions().epochs(5).batch_size(128).validation_split(0.1));
//   auto scores = model.evaluate(x_test, y_test);        // {"loss": .., "accuracy": ..}
//   Tensor probs = model.predict(x_test);
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/callbacks/history.h"
#include "framework/callbacks/logs.h"
#include "framework/core/device_scope.h"
#include "framework/model/layer.h"
#include "framework/model/training_args.h"
#include "framework/model/training_progress.h"

namespace strata {

class DatasetCreator;
class EpochIterator;
class FunctionalGraph;
struct CompiledState;
namespace distribute {
class Strategy;
}

class Model : public Layer {
 public:
  // A model to subclass: override call() (or call_multi()) and track() its layers.
  explicit Model(const std::string& name = "");
  // A functional model from the graph between `inputs` and `outputs`.
  Model(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs,
        const std::string& name = "");
  Model(const KerasTensor& input, const KerasTensor& output, const std::string& name = "");
  ~Model() override;

  std::string class_name() const override;  // "Functional", "Sequential" or "Model"
  Json get_config() const override;
  // {"class_name": ..., "config": ..., "keras_version": ..., "backend": ...} as Keras writes it.
  std::string to_json(int indent = -1) const;

  // Several outputs: call_outputs returns them all; operator() returns the first one.
  std::vector<Tensor> call_outputs(const std::vector<Tensor>& inputs, bool training = false);

  // Layers in order (functional: graph order without Inputs; Sequential: as added).
  virtual std::vector<std::shared_ptr<Layer>> layers() const;
  // The layer named `name`; ValueError listing the names otherwise.
  std::shared_ptr<Layer> get_layer(const std::string& name) const;
  // Keras' summary table, printed to stdout (or returned).
  void summary() const;
  std::string summary_string() const;

  // ---- training ----
  void compile(const CompileOptions& options);
  void compile(OptimizerArg optimizer, LossArg loss, std::vector<MetricArg> metrics = {});
  bool compiled() const { return compiled_ != nullptr; }
  const std::shared_ptr<optimizers::Optimizer>& optimizer() const;
  // Compiled metrics (after the first step has resolved them), for callbacks and tests.
  std::vector<std::shared_ptr<metrics::Metric>> metrics() const;

  History fit(const Tensor& x, const Tensor& y, const FitOptions& options = {});
  History fit(const data::Dataset& dataset, const FitOptions& options = {});
  // Under ParameterServerStrategy (TensorFlow's DatasetCreator, dataset_creator.h): every worker
  // builds its dataset from the registered function and runs steps_per_epoch training steps per
  // epoch (required); epoch-level callbacks and validation run here. ValueError without such a
  // strategy.
  History fit(const DatasetCreator& creator, const FitOptions& options = {});
  std::map<std::string, double> evaluate(const Tensor& x, const Tensor& y,
                                         const EvaluateOptions& options = {});
  std::map<std::string, double> evaluate(const data::Dataset& dataset,
                                         const EvaluateOptions& options = {});
  // Under ParameterServerStrategy: `steps` (required) batches of the registered function's
  // dataset for one input pipeline, evaluated on this task (the coordinator), not the workers.
  std::map<std::string, double> evaluate(const DatasetCreator& creator,
                                         const EvaluateOptions& options = {});
  Tensor predict(const Tensor& x, const PredictOptions& options = {});
  Tensor predict(const data::Dataset& dataset, const PredictOptions& options = {});
  // One step on one batch, without callbacks; returns the logs (metrics reset first unless
  // reset_metrics is false).
  Logs train_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight = Tensor(),
                      bool reset_metrics = true);
  Logs test_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight = Tensor(),
                     bool reset_metrics = true);
  Tensor predict_on_batch(const Tensor& x);

  // Keras' train_step / test_step / predict_step: override to customise a step (e.g. a GAN);
  // `batch` is (x, y) or (x, y, sample_weight), this replica's part of the global batch under a
  // strategy. They update the compiled metrics; the loop reads them through metrics_logs().
  virtual void train_step(const data::Element& batch);
  virtual void test_step(const data::Element& batch);
  virtual Tensor predict_step(const data::Element& batch);
  // The current values of "loss" and the compiled metrics.
  Logs metrics_logs() const;
  // Where the model's steps run without a strategy: the default device (DeviceScope) when the
  // model was created, or when it was compiled if it had no weights yet. fit / evaluate /
  // predict move each batch there (a GPU: through pinned memory, asynchronously). Under a
  // strategy, every replica runs on its own device instead.
  Device device() const { return device_; }
  // Internal: what compile() set up (null before compile), for saving and the trainer.
  const std::shared_ptr<CompiledState>& compiled_state() const { return compiled_; }
  void reset_metrics();

  // The distribution strategy whose scope was active when the model was created or compiled
  // (null: none). fit / evaluate / predict re-enter it and run each step on all its replicas.
  distribute::Strategy* distribute_strategy() const;

  // Set by callbacks (EarlyStopping, TerminateOnNaN) to end fit() after the current epoch/step.
  bool stop_training = false;

  // Where the running fit() is (epoch, batch, input position), for callbacks that checkpoint.
  // The input position is read from the data when asked, not tracked on every step.
  TrainingProgress training_progress() const;
  // Makes the current (when called from on_train_begin) or next fit() start at `point` instead
  // of at initial_epoch: what BackupAndRestore does after restoring a backup.
  void resume_at(const ResumePoint& point) { resume_point_ = point; }

  // ---- weights and saving (Keras' .keras and HDF5 formats; framework/saving/) ----
  // Copies of every weight's value, in weights() order (Keras' get_weights).
  std::vector<Tensor> get_weights() const;
  // Assigns values in weights() order; the count and each shape must match (ValueError /
  // ShapeError naming the weight).
  void set_weights(const std::vector<Tensor>& values);
  // Keras' model.save_weights / load_weights / save, forwarding to the free functions
  // save_weights(model, path), load_weights(model, path, ...) and save_model(model, path) in
  // framework/saving/save_model.h, which document the formats. In short: save_weights writes
  // Keras 2's weights file, or Keras 3's layout for a path ending in ".weights.h5"; load_weights
  // reads either, full-model files and .keras archives (by_name: Keras 2 layouts only;
  // skip_mismatch: skip weights whose shape differs); save writes a .keras archive for a path
  // ending in ".keras", else Keras 2's HDF5 full-model layout. Every write is atomic. Reload a
  // saved model with load_model() (layers/load_model.h).
  void save_weights(const std::string& path) const;
  void load_weights(const std::string& path, bool by_name = false, bool skip_mismatch = false);
  void save(const std::string& path) const;

 protected:
  Tensor call(const Tensor& x, bool training) override;
  Tensor call_multi(const std::vector<Tensor>& xs, bool training) override;
  // The functional graph (null for subclassed models and Sequential).
  const std::shared_ptr<FunctionalGraph>& graph() const { return graph_; }

  // Loss of a batch of predictions (compiled losses, loss weights, plus regularization losses).
  Tensor compute_loss(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred,
                      const Tensor& sample_weight);
  // Updates the compiled metrics (and the loss tracker with `loss`).
  void update_metrics(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred,
                      const Tensor& sample_weight, const Tensor& loss);
  // Resolves the compiled metrics from the first batch's shapes ("accuracy" depends on them).
  void build_metrics(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred);

 private:
  // The loops (framework/trainer/) run the steps and keep the progress fields below.
  friend class Trainer;
  // save_model refuses a subclassed model, whose architecture cannot be stored: one without a
  // functional graph (graph()) that is not a Sequential. class_name() alone cannot tell, since
  // a subclass may override it; a friend keeps graph() off the public API.
  friend void save_model(const Model& model, const std::string& path);
  void require_compiled(const char* method) const;
  // Builds the compiled metrics (once) from a batch (x, y, ...): a forward pass on its first
  // sample gives the output shapes. The trainer calls it in the cross-replica context.
  void build_metrics_from(const data::Element& batch);
  // Remembers the strategy of the active scope, if any (constructors and compile).
  void remember_strategy();

  std::shared_ptr<FunctionalGraph> graph_;
  std::shared_ptr<CompiledState> compiled_;
  TrainingProgress progress_;                      // epoch and step; data filled on demand
  const EpochIterator* fit_data_ = nullptr;         // the running fit()'s training data
  std::optional<ResumePoint> resume_point_;
  distribute::Strategy* strategy_ = nullptr;
  std::weak_ptr<const bool> strategy_alive_;  // expires with the strategy
  Device device_ = default_device();  // see device()
};

}  // namespace strata
