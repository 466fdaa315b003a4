// Model: construction, calling, layers, config. Training lives in model_training.cc (compile,
// steps, losses, metrics) and model_fit.cc (the fit / evaluate / predict loops).
#include "framework/model/model.h"

#include "framework/model/compiled_state.h"
#include "framework/model/functional_graph.h"

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

}  // namespace strata
