#include "framework/optimizers/optimizer_factory.h"

#include <algorithm>
#include <cctype>

#include "framework/core/error.h"
#include "framework/optimizers/adagrad.h"
#include "framework/optimizers/adam.h"
#include "framework/optimizers/adamw.h"
#include "framework/optimizers/loss_scale_optimizer.h"
#include "framework/optimizers/rmsprop.h"
#include "framework/optimizers/sgd.h"

namespace strata::optimizers {
namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

double number_or(const Json& c, const char* key, double fallback) {
  const Json v = c.get(key, Json(nullptr));
  return v.is_null() ? fallback : v.as_double();
}

std::optional<double> optional_number(const Json& c, const char* key) {
  const Json v = c.get(key, Json(nullptr));
  if (v.is_null()) return std::nullopt;
  return v.as_double();
}

std::vector<double> doubles(const Json& array) {
  std::vector<double> out;
  for (size_t i = 0; i < array.size(); ++i) out.push_back(array.at(i).as_double());
  return out;
}

// The base keyword arguments every optimizer takes, into its options struct.
template <typename Options>
Options base_options(const Json& c) {
  Options o;
  if (c.contains("name") && c.at("name").is_string()) o.name(c.at("name").as_string());
  if (auto v = optional_number(c, "weight_decay")) o.weight_decay(*v);
  if (auto v = optional_number(c, "clipnorm")) o.clipnorm(*v);
  if (auto v = optional_number(c, "clipvalue")) o.clipvalue(*v);
  if (auto v = optional_number(c, "global_clipnorm")) o.global_clipnorm(*v);
  return o;
}

LearningRate learning_rate_of(const Json& c, double fallback) {
  const Json lr = c.get("learning_rate", c.get("lr", Json(nullptr)));  // "lr": Keras 1 files
  if (lr.is_null()) return fallback;
  if (lr.is_object()) return deserialize_schedule(lr);
  return lr.as_double();
}

}  // namespace

Json serialize(const Optimizer& optimizer) {
  return Json::object({{"class_name", optimizer.class_name()}, {"config", optimizer.get_config()}});
}

std::shared_ptr<Optimizer> deserialize(const Json& config) {
  if (!config.is_object() || !config.contains("class_name")) {
    throw ValueError("optimizers::deserialize: expected {\"class_name\": ..., \"config\": {...}}, got " +
                     config.dump());
  }
  const std::string cls = config.at("class_name").as_string();
  const Json c = config.get("config", Json::object());
  if (c.get("use_ema", Json(false)).as_bool()) {
    throw ValueError("optimizers::deserialize: " + cls + " with use_ema=true is not supported by "
                     "Strata; save the model with use_ema=false");
  }
  // Keras 3 arguments Strata has no equivalent for; their defaults (null) are fine.
  for (const char* unsupported : {"gradient_accumulation_steps", "loss_scale_factor"}) {
    if (!c.get(unsupported, Json(nullptr)).is_null()) {
      throw ValueError("optimizers::deserialize: " + cls + " with " + unsupported + "=" +
                       c.at(unsupported).dump() + " is not supported by Strata; save the model "
                       "with " + unsupported + "=None");
    }
  }
  const std::string key = lowercase(cls);
  if (key == "sgd") {
    auto o = base_options<SGDOptions>(c)
                 .momentum(number_or(c, "momentum", 0.0))
                 .nesterov(c.get("nesterov", Json(false)).as_bool());
    return std::make_shared<SGD>(learning_rate_of(c, 0.01), o);
  }
  if (key == "adam" || key == "adamw") {
    const bool adamw = key == "adamw";
    auto fill = [&](auto o) {
      o.beta_1(number_or(c, "beta_1", 0.9))
          .beta_2(number_or(c, "beta_2", 0.999))
          .epsilon(number_or(c, "epsilon", 1e-7))
          .amsgrad(c.get("amsgrad", Json(false)).as_bool());
      return o;
    };
    if (adamw) {
      AdamWOptions o = fill(base_options<AdamWOptions>(c));
      if (!optional_number(c, "weight_decay")) o.weight_decay(0.004);
      return std::make_shared<AdamW>(learning_rate_of(c, 0.001), o);
    }
    return std::make_shared<Adam>(learning_rate_of(c, 0.001), fill(base_options<AdamOptions>(c)));
  }
  if (key == "rmsprop") {
    auto o = base_options<RMSpropOptions>(c)
                 .rho(number_or(c, "rho", 0.9))
                 .momentum(number_or(c, "momentum", 0.0))
                 .epsilon(number_or(c, "epsilon", 1e-7))
                 .centered(c.get("centered", Json(false)).as_bool());
    return std::make_shared<RMSprop>(learning_rate_of(c, 0.001), o);
  }
  if (key == "lossscaleoptimizer") {
    // Keras 3's config; Keras 2's also says "dynamic": true (the only kind Keras 3 has).
    if (!c.get("dynamic", Json(true)).as_bool()) {
      throw ValueError("optimizers::deserialize: LossScaleOptimizer with dynamic=false is not "
                       "supported (as in Keras 3); use the inner optimizer alone");
    }
    if (!c.contains("inner_optimizer")) {
      throw ValueError("optimizers::deserialize: LossScaleOptimizer config lacks "
                       "\"inner_optimizer\": " + c.dump());
    }
    LossScaleOptimizerOptions o;
    if (c.contains("name") && c.at("name").is_string()) o.name(c.at("name").as_string());
    o.initial_scale(number_or(c, "initial_scale", 32768.0))
        .dynamic_growth_steps(c.get("dynamic_growth_steps", Json(int64_t(2000))).as_int());
    return std::make_shared<LossScaleOptimizer>(deserialize(c.at("inner_optimizer")), o);
  }
  if (key == "adagrad") {
    auto o = base_options<AdagradOptions>(c)
                 .initial_accumulator_value(number_or(c, "initial_accumulator_value", 0.1))
                 .epsilon(number_or(c, "epsilon", 1e-7));
    return std::make_shared<Adagrad>(learning_rate_of(c, 0.001), o);
  }
  throw ValueError("optimizers::deserialize: unknown optimizer class '" + cls +
                   "'; known: Adagrad, Adam, AdamW, LossScaleOptimizer, RMSprop, SGD");
}

std::shared_ptr<Optimizer> get(const std::string& identifier) {
  const std::string key = lowercase(identifier);
  if (key != "adagrad" && key != "adam" && key != "adamw" && key != "rmsprop" && key != "sgd") {
    throw ValueError("optimizers::get: could not interpret optimizer identifier '" + identifier +
                     "'; valid names: adagrad, adam, adamw, rmsprop, sgd");
  }
  return deserialize(Json::object({{"class_name", identifier}}));  // Keras' defaults
}

Json serialize_schedule(const LearningRateSchedule& schedule) {
  return Json::object({{"module", "keras.optimizers.schedules"},
                       {"class_name", schedule.name()},
                       {"config", Json::parse(schedule.get_config())},
                       {"registered_name", nullptr}});
}

std::shared_ptr<LearningRateSchedule> deserialize_schedule(const Json& config) {
  const std::string cls = config.get("class_name", Json("")).as_string();
  const Json c = config.get("config", Json::object());
  if (cls == "PiecewiseConstantDecay") {
    return std::make_shared<PiecewiseConstantDecay>(c.at("boundaries").as_int_vector(),
                                                    doubles(c.at("values")));
  }
  if (cls == "ExponentialDecay") {
    return std::make_shared<ExponentialDecay>(
        c.at("initial_learning_rate").as_double(), c.at("decay_steps").as_int(),
        c.at("decay_rate").as_double(), c.get("staircase", Json(false)).as_bool());
  }
  if (cls == "CosineDecay") {
    return std::make_shared<CosineDecay>(c.at("initial_learning_rate").as_double(),
                                         c.at("decay_steps").as_int(), number_or(c, "alpha", 0.0),
                                         optional_number(c, "warmup_target"),
                                         c.get("warmup_steps", Json(int64_t(0))).as_int());
  }
  throw ValueError("optimizers::deserialize_schedule: unknown learning-rate schedule '" + cls +
                   "'; known: CosineDecay, ExponentialDecay, PiecewiseConstantDecay");
}

}  // namespace strata::optimizers
