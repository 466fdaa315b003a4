#include "framework/saving/training_config.h"

#include "framework/core/error.h"
#include "framework/losses/loss_factory.h"
#include "framework/metrics/metric.h"
#include "framework/model/compiled_state.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer_factory.h"

namespace strata::saving {

Json training_config(const Model& model) {
  const auto& state = model.compiled_state();
  if (!state) {
    throw ValueError("training_config: model '" + model.name() + "' is not compiled; call "
                     "compile() before saving its training configuration");
  }
  // Loss objects are stored whole (class and arguments such as from_logits), one per output,
  // or a single one when every output shares it, as Keras does.
  Json loss;
  if (state->losses.size() == 1) {
    loss = losses::serialize(*state->losses[0]);
  } else {
    loss = Json::array();
    for (const auto& l : state->losses) loss.push_back(losses::serialize(*l));
  }
  Json metrics = Json::array();
  for (const MetricArg& m : state->metric_args) metrics.push_back(m.object ? m.object->name() : m.name);
  bool default_weights = true;
  Json loss_weights = Json::array();
  for (double w : state->loss_weights) {
    loss_weights.push_back(w);
    default_weights = default_weights && w == 1.0;
  }
  return Json::object({{"loss", loss},
                       {"metrics", metrics},
                       {"weighted_metrics", nullptr},
                       {"loss_weights", default_weights ? Json(nullptr) : loss_weights},
                       {"steps_per_execution", state->steps_per_execution},
                       {"optimizer_config", optimizers::serialize(*state->optimizer)}});
}

namespace {

// Keras writes metrics as names, as lists of names per output ([["accuracy"]]), or as
// serialized metric objects whose config carries the name.
void collect_metric_names(const Json& m, std::vector<MetricArg>& out) {
  if (m.is_null()) return;
  if (m.is_string()) {
    out.emplace_back(m.as_string());
  } else if (m.is_array()) {
    for (size_t i = 0; i < m.size(); ++i) collect_metric_names(m.at(i), out);
  } else if (m.is_object() && m.contains("config") && m.at("config").contains("name")) {
    out.emplace_back(m.at("config").at("name").as_string());
  } else if (m.is_object()) {
    for (const std::string& key : m.keys()) collect_metric_names(m.at(key), out);  // per output
  } else {
    throw ValueError("compile_from_training_config: cannot read metric " + m.dump());
  }
}

}  // namespace

void compile_from_training_config(Model& model, const Json& config) {
  if (!config.is_object() || !config.contains("loss") || !config.contains("optimizer_config")) {
    throw ValueError("compile_from_training_config: expected an object with \"loss\" and "
                     "\"optimizer_config\", got " + config.dump());
  }
  CompileOptions options;
  options.optimizer(optimizers::deserialize(config.at("optimizer_config")));
  const Json loss = config.at("loss");
  std::vector<LossArg> loss_args;
  if (loss.is_array()) {
    for (size_t i = 0; i < loss.size(); ++i) loss_args.emplace_back(losses::deserialize(loss.at(i)));
  } else if (loss.is_object() && !loss.contains("class_name")) {  // {output name: loss}
    for (const std::string& key : loss.keys()) loss_args.emplace_back(losses::deserialize(loss.at(key)));
  } else {
    loss_args.emplace_back(losses::deserialize(loss));
  }
  options.loss(loss_args);
  std::vector<MetricArg> metrics;
  collect_metric_names(config.get("metrics", Json(nullptr)), metrics);
  options.metrics(metrics);
  const Json weights = config.get("loss_weights", Json(nullptr));
  if (weights.is_array()) {
    std::vector<double> w;
    for (size_t i = 0; i < weights.size(); ++i) w.push_back(weights.at(i).as_double());
    options.loss_weights(w);
  }
  options.steps_per_execution(int(config.get("steps_per_execution", Json(1)).as_int()));
  model.compile(options);
}

}  // namespace strata::saving
