// Model: construction, calling, layers, config, the strategy it belongs to. Training lives in
// model_training.cc (compile, steps, losses, metrics); the fit / evaluate / predict loops in
// framework/trainer/, which the methods at the end of this file hand over to; saving in
// framework/saving/ (save_model.h), which save / save_weights / load_weights hand over to.
#include "framework/model/model.h"

#include "framework/model/compiled_state.h"
#include "framework/model/functional_graph.h"
#include "framework/saving/save_model.h"
#include "framework/strategy/strategy.h"
#include "framework/trainer/epoch_iterator.h"
#include "framework/trainer/trainer.h"

namespace strata {

Model::Model(const std::string& name) : Layer("model", name) { remember_strategy(); }

Model::Model(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs,
             const std::string& name)
    : Layer("model", name), graph_(std::make_shared<FunctionalGraph>(inputs, outputs)) {
  set_autocast_inputs(false);  // each layer casts its own inputs (a float32 layer stays float32)
  for (const auto& layer : graph_->layers()) track_layer(layer);
  set_built();
  remember_strategy();
}

Model::Model(const KerasTensor& input, const KerasTensor& output, const std::string& name)
    : Model(std::vector<KerasTensor>{input}, std::vector<KerasTensor>{output}, name) {}

Model::~Model() = default;

std::string Model::class_name() const { return graph_ ? "Functional" : "Model"; }

Json Model::get_config() const {
  if (graph_) return graph_->config(name());
  return Layer::get_config();  // subclassed models: as Keras, only the base config
}

std::string Model::to_json(int indent) const {
  return Json::object({{"class_name", class_name()},
                       {"config", get_config()},
                       {"keras_version", "2.15.0"},
                       {"backend", "tensorflow"}})
      .dump(indent);
}

std::vector<Tensor> Model::call_outputs(const std::vector<Tensor>& inputs, bool training) {
  // A functional model runs its graph directly (every output); other models go through
  // Layer::operator() (build on first use) and have one output.
  if (graph_) return graph_->run(inputs, training, name());
  return {(*this)(inputs, training)};
}

Tensor Model::call(const Tensor& x, bool training) {
  if (graph_) return graph_->run({x}, training, name())[0];
  throw ValueError("Model '" + name() + "': a subclassed model must override call() (or "
                   "call_multi()); build functional models with Model(inputs, outputs)");
}

Tensor Model::call_multi(const std::vector<Tensor>& xs, bool training) {
  if (graph_) return graph_->run(xs, training, name())[0];
  if (xs.size() == 1) return call(xs[0], training);
  throw ValueError("Model '" + name() + "': received " + std::to_string(xs.size()) +
                   " inputs; a subclassed model taking several inputs must override call_multi()");
}

std::vector<Tensor> Model::get_weights() const {
  std::vector<Tensor> values;
  for (const VariablePtr& v : weights()) values.push_back(v->read_value());
  return values;
}

void Model::set_weights(const std::vector<Tensor>& values) {
  const std::vector<VariablePtr> vars = weights();
  if (values.size() != vars.size()) {
    throw ValueError("Model '" + name() + "'.set_weights: expected " + std::to_string(vars.size()) +
                     " arrays (one per weight, in weights() order), got " +
                     std::to_string(values.size()));
  }
  for (size_t i = 0; i < vars.size(); ++i) {
    if (values[i].shape() != vars[i]->shape()) {
      throw ShapeError("Model '" + name() + "'.set_weights: weight '" + vars[i]->name() +
                       "' has shape " + vars[i]->shape().to_string() + ", got an array of shape " +
                       values[i].shape().to_string());
    }
  }
  for (size_t i = 0; i < vars.size(); ++i) vars[i]->assign(values[i].cast(vars[i]->dtype()));
}

// Qualified: inside Model, the unqualified names would find these members themselves.
void Model::save_weights(const std::string& path) const { strata::save_weights(*this, path); }

void Model::load_weights(const std::string& path, bool by_name, bool skip_mismatch) {
  strata::load_weights(*this, path, by_name, skip_mismatch);
}

void Model::save(const std::string& path) const { strata::save_model(*this, path); }

std::vector<std::shared_ptr<Layer>> Model::layers() const {
  if (graph_) return graph_->layers();
  return sublayers();
}

std::shared_ptr<Layer> Model::get_layer(const std::string& name) const {
  std::string names;
  for (const auto& l : layers()) {
    if (l->name() == name) return l;
    names += (names.empty() ? "" : ", ") + l->name();
  }
  throw ValueError("Model '" + this->name() + "': no layer named '" + name + "'; layers: " + names);
}

distribute::Strategy* Model::distribute_strategy() const {
  if (strategy_ == nullptr) return nullptr;
  if (strategy_alive_.expired()) {
    throw StateError("Model '" + name() + "': the distribution strategy whose scope created it "
                     "has been destroyed; keep the strategy alive as long as the model");
  }
  return strategy_;
}

void Model::remember_strategy() {
  distribute::Strategy* active = distribute::current_strategy();
  if (active == nullptr) return;
  if (strategy_ != nullptr && !strategy_alive_.expired() && strategy_ != active) {
    throw StateError("Model '" + name() + "' was created under " + strategy_->name() +
                     " but is being compiled under a different strategy (" + active->name() +
                     "); create and compile a model in the same strategy's scope");
  }
  strategy_ = active;
  strategy_alive_ = active->liveness();
}

// ---- the loops: framework/trainer/ ----

History Model::fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
  return Trainer(*this).fit(x, y, options);
}

History Model::fit(const data::Dataset& dataset, const FitOptions& options) {
  return Trainer(*this).fit(dataset, options);
}

History Model::fit(const DatasetCreator& creator, const FitOptions& options) {
  return Trainer(*this).fit(creator, options);
}

std::map<std::string, double> Model::evaluate(const DatasetCreator& creator,
                                              const EvaluateOptions& options) {
  return Trainer(*this).evaluate(creator, options);
}

std::map<std::string, double> Model::evaluate(const Tensor& x, const Tensor& y,
                                              const EvaluateOptions& options) {
  return Trainer(*this).evaluate(x, y, options);
}

std::map<std::string, double> Model::evaluate(const data::Dataset& dataset,
                                              const EvaluateOptions& options) {
  return Trainer(*this).evaluate(dataset, options);
}

Tensor Model::predict(const Tensor& x, const PredictOptions& options) {
  return Trainer(*this).predict(x, options);
}

Tensor Model::predict(const data::Dataset& dataset, const PredictOptions& options) {
  return Trainer(*this).predict(dataset, options);
}

Logs Model::train_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight,
                           bool reset_metrics) {
  data::Element batch{x, y};
  if (sample_weight.defined()) batch.push_back(sample_weight);
  return Trainer(*this).train_on_batch(batch, reset_metrics);
}

Logs Model::test_on_batch(const Tensor& x, const Tensor& y, const Tensor& sample_weight,
                          bool reset_metrics) {
  data::Element batch{x, y};
  if (sample_weight.defined()) batch.push_back(sample_weight);
  return Trainer(*this).test_on_batch(batch, reset_metrics);
}

Tensor Model::predict_on_batch(const Tensor& x) { return Trainer(*this).predict_on_batch(x); }

TrainingProgress Model::training_progress() const {
  TrainingProgress p = progress_;
  if (fit_data_) p.data = fit_data_->position();
  return p;
}

}  // namespace strata
