// Loss objects' Keras configs and (de)serialization, so a saved model's training_config keeps
// arguments like from_logits (compile("...") names alone would lose them).
#include "framework/core/error.h"
#include "framework/losses/crossentropy.h"
#include "framework/losses/loss_factory.h"
#include "framework/losses/regression.h"

namespace strata::losses {

Json Loss::get_config() const {
  return Json::object({{"reduction", reduction_name(reduction_)}, {"name", name_}});
}

namespace {
Json with_crossentropy_args(Json c, bool from_logits, double label_smoothing, int axis) {
  c.set("from_logits", from_logits);
  c.set("label_smoothing", label_smoothing);
  c.set("axis", axis);
  return c;
}
}  // namespace

Json SparseCategoricalCrossentropy::get_config() const {
  Json c = Loss::get_config();
  c.set("from_logits", from_logits_);
  c.set("ignore_class", nullptr);
  if (label_smoothing_ != 0.0) c.set("label_smoothing", label_smoothing_);
  return c;
}
Json CategoricalCrossentropy::get_config() const {
  return with_crossentropy_args(Loss::get_config(), from_logits_, label_smoothing_, axis_);
}
Json BinaryCrossentropy::get_config() const {
  return with_crossentropy_args(Loss::get_config(), from_logits_, label_smoothing_, axis_);
}
Json Huber::get_config() const {
  Json c = Loss::get_config();
  c.set("delta", delta_);
  return c;
}

Json serialize(const Loss& loss) {
  return Json::object({{"class_name", loss.class_name()}, {"config", loss.get_config()}});
}

std::shared_ptr<Loss> deserialize(const Json& config) {
  if (config.is_string()) return get(config.as_string());
  if (!config.is_object() || !config.contains("class_name")) {
    throw ValueError("losses::deserialize: expected a loss name or {\"class_name\": ..., "
                     "\"config\": {...}}, got " + config.dump());
  }
  const std::string cls = config.at("class_name").as_string();
  const Json c = config.get("config", Json::object());
  const Reduction reduction =
      reduction_from_name(c.get("reduction", Json("sum_over_batch_size")).as_string());
  const bool from_logits = c.get("from_logits", Json(false)).as_bool();
  const double smoothing = c.get("label_smoothing", Json(0.0)).as_double();
  const int axis = int(c.get("axis", Json(-1)).as_int());
  auto name_or = [&](const char* fallback) { return c.get("name", Json(fallback)).as_string(); };
  if (cls == "SparseCategoricalCrossentropy") {
    return std::make_shared<SparseCategoricalCrossentropy>(
        from_logits, reduction, name_or("sparse_categorical_crossentropy"), smoothing);
  }
  if (cls == "CategoricalCrossentropy") {
    return std::make_shared<CategoricalCrossentropy>(from_logits, smoothing, axis, reduction,
                                                     name_or("categorical_crossentropy"));
  }
  if (cls == "BinaryCrossentropy") {
    return std::make_shared<BinaryCrossentropy>(from_logits, smoothing, axis, reduction,
                                                name_or("binary_crossentropy"));
  }
  if (cls == "MeanSquaredError") {
    return std::make_shared<MeanSquaredError>(reduction, name_or("mean_squared_error"));
  }
  if (cls == "MeanAbsoluteError") {
    return std::make_shared<MeanAbsoluteError>(reduction, name_or("mean_absolute_error"));
  }
  if (cls == "Huber") {
    return std::make_shared<Huber>(c.get("delta", Json(1.0)).as_double(), reduction,
                                   name_or("huber_loss"));
  }
  throw ValueError("losses::deserialize: unknown loss class '" + cls +
                   "'; known: BinaryCrossentropy, CategoricalCrossentropy, Huber, "
                   "MeanAbsoluteError, MeanSquaredError, SparseCategoricalCrossentropy");
}

}  // namespace strata::losses
