// Optimizers' Keras configs (get_config). The keys and their order are Keras 2.15's, so a
// training_config written here reads back in Keras, and Keras' reads back here.
#include "framework/optimizers/adagrad.h"
#include "framework/optimizers/adam.h"
#include "framework/optimizers/optimizer.h"
#include "framework/optimizers/optimizer_factory.h"
#include "framework/optimizers/rmsprop.h"
#include "framework/optimizers/sgd.h"

namespace strata::optimizers {
namespace {
Json optional_number(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }
}  // namespace

Json Optimizer::get_config() const {
  Json c = Json::object({{"name", name_},
                         {"weight_decay", optional_number(config_.weight_decay)},
                         {"clipnorm", optional_number(config_.clipnorm)},
                         {"global_clipnorm", optional_number(config_.global_clipnorm)},
                         {"clipvalue", optional_number(config_.clipvalue)},
                         {"use_ema", false},
                         {"ema_momentum", 0.99},
                         {"ema_overwrite_frequency", nullptr},
                         {"jit_compile", false},
                         {"is_legacy_optimizer", false}});
  const auto& schedule = learning_rate_.schedule();
  c.set("learning_rate", schedule ? serialize_schedule(*schedule) : Json(learning_rate_.at(0)));
  return c;
}

Json SGD::get_config() const {
  Json c = Optimizer::get_config();
  c.set("momentum", momentum_);
  c.set("nesterov", nesterov_);
  return c;
}

Json Adam::get_config() const {
  Json c = Optimizer::get_config();
  c.set("beta_1", hyper_.beta_1);
  c.set("beta_2", hyper_.beta_2);
  c.set("epsilon", hyper_.epsilon);
  c.set("amsgrad", hyper_.amsgrad);
  return c;
}

Json RMSprop::get_config() const {
  Json c = Optimizer::get_config();
  c.set("rho", rho_);
  c.set("momentum", momentum_);
  c.set("epsilon", epsilon_);
  c.set("centered", centered_);
  return c;
}

Json Adagrad::get_config() const {
  Json c = Optimizer::get_config();
  c.set("initial_accumulator_value", initial_);
  c.set("epsilon", epsilon_);
  return c;
}

}  // namespace strata::optimizers
