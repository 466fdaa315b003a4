#include "framework/saving/keras3_compile_config.h"

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/saving/keras3_layer_config.h"
#include "framework/saving/keras_attributes.h"
#include "framework/saving/training_config.h"

namespace strata::saving {
namespace {

// BaseOptimizer.get_config's keys (Keras 3.10), in its order, with the defaults a Keras 2
// config lacks.
const std::vector<std::pair<std::string, Json>>& base_optimizer_keys() {
  static const std::vector<std::pair<std::string, Json>> keys = {
      {"name", Json()},
      {"learning_rate", Json()},
      {"weight_decay", Json()},
      {"clipnorm", Json()},
      {"global_clipnorm", Json()},
      {"clipvalue", Json()},
      {"use_ema", Json(false)},
      {"ema_momentum", Json(0.99)},
      {"ema_overwrite_frequency", Json()},
      {"loss_scale_factor", Json()},
      {"gradient_accumulation_steps", Json()},
  };
  return keys;
}

bool is_base_key(const std::string& key) {
  if (key == "jit_compile" || key == "is_legacy_optimizer") return true;  // Keras 2 only
  for (const auto& [k, fallback] : base_optimizer_keys()) {
    if (k == key) return true;
  }
  return false;
}

// Keras 3 stores a function given to compile (loss=keras.losses.mse) as {"class_name":
// "function", "config": "mean_squared_error", ...}: its name is what Strata resolves.
Json functions_as_names(const Json& j) {
  if (j.is_object() && j.get("class_name", Json("")).is_string() &&
      j.get("class_name", Json("")).as_string() == "function" && j.contains("config") &&
      j.at("config").is_string()) {
    return j.at("config");
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (size_t i = 0; i < j.size(); ++i) out.push_back(functions_as_names(j.at(i)));
    return out;
  }
  if (j.is_object() && !j.contains("class_name")) {  // {output name: loss or metrics}
    Json out = Json::object();
    for (const std::string& k : j.keys()) out.set(k, functions_as_names(j.at(k)));
    return out;
  }
  return j;
}

}  // namespace

Json keras3_optimizer(const Json& serialized) {
  const std::string cls = serialized.at("class_name").as_string();
  const Json c = serialized.get("config", Json::object());
  Json config = Json::object();
  if (cls == "LossScaleOptimizer") {
    config.set("name", c.get("name", Json(cls)));
    config.set("inner_optimizer", keras3_optimizer(c.at("inner_optimizer")));
    config.set("initial_scale", c.get("initial_scale", Json(32768.0)));
    config.set("dynamic_growth_steps", c.get("dynamic_growth_steps", Json(int64_t(2000))));
  } else {
    for (const auto& [key, fallback] : base_optimizer_keys()) {
      config.set(key, c.contains(key) ? c.at(key) : fallback);
    }
    for (const std::string& key : c.keys()) {
      if (!is_base_key(key)) config.set(key, c.at(key));
    }
  }
  return Json::object({{"module", "keras.optimizers"},
                       {"class_name", cls},
                       {"config", config},
                       {"registered_name", nullptr}});
}

Json keras3_compile_config(const Model& model) {
  if (!model.compiled()) return Json::object();
  const Json tc = training_config(model);
  Json loss = tc.at("loss");
  if (loss.is_array()) {
    Json list = Json::array();
    for (size_t i = 0; i < loss.size(); ++i) list.push_back(keras3_object(loss.at(i), "keras.losses"));
    loss = list;
  } else {
    loss = keras3_object(loss, "keras.losses");
  }
  const Json metrics = tc.at("metrics");
  return Json::object({{"optimizer", keras3_optimizer(tc.at("optimizer_config"))},
                       {"loss", loss},
                       {"loss_weights", tc.at("loss_weights")},
                       {"metrics", metrics.size() == 0 ? Json() : metrics},
                       {"weighted_metrics", nullptr},
                       {"run_eagerly", false},
                       {"steps_per_execution", tc.at("steps_per_execution")},
                       {"jit_compile", false}});
}

bool compile_from_keras3_config(Model& model, const Json& compile_config,
                                const std::string& file) {
  const Json loss = compile_config.get("loss", Json());
  if (loss.is_null()) {
    warn("'" + file + "' was compiled without a loss (compile_config has \"loss\": null), which "
         "Strata's fit() needs, so the model was *not* compiled. Compile it manually.");
    return false;
  }
  // compile()'s default optimizer is "rmsprop"; a name stands for the class with defaults.
  Json optimizer = compile_config.get("optimizer", Json());
  if (optimizer.is_null()) optimizer = Json("rmsprop");
  if (optimizer.is_string()) optimizer = Json::object({{"class_name", optimizer}});
  Json training = Json::object({{"loss", functions_as_names(loss)},
                                {"metrics", functions_as_names(compile_config.get("metrics", Json()))},
                                {"loss_weights", compile_config.get("loss_weights", Json())},
                                {"optimizer_config", optimizer}});
  const Json steps = compile_config.get("steps_per_execution", Json());
  if (steps.is_number()) training.set("steps_per_execution", steps);
  compile_from_training_config(model, training);
  return true;
}

}  // namespace strata::saving
