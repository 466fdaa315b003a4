// The keyword arguments every Keras optimizer accepts (name, weight_decay, clipnorm, clipvalue,
// global_clipnorm), as chained setters that each optimizer's options struct inherits:
//
//   optimizers::Adam adam(1e-3, optimizers::AdamOptions().beta_1(0.8).clipnorm(1.0));
#pragma once

#include <optional>
#include <string>

namespace strata::optimizers {

// What the base Optimizer needs; unset optionals mean "off", as Keras's None.
struct OptimizerConfig {
  std::string name;  // empty: the class name ("Adam", "SGD", ...)
  std::optional<double> weight_decay;
  std::optional<double> clipnorm;
  std::optional<double> clipvalue;
  std::optional<double> global_clipnorm;
};

// CRTP base: setters return the derived options type so chains can mix both kinds of setter.
template <typename Derived>
class OptimizerOptions {
 public:
  // Prefix of the optimizer's variables ("Adam/iter", "Adam/dense/kernel/m").
  Derived& name(std::string value) { config_.name = std::move(value); return self(); }
  // Decoupled weight decay: each step first does var -= learning_rate * weight_decay * var.
  Derived& weight_decay(double value) { config_.weight_decay = value; return self(); }
  // Each gradient is rescaled so its own L2 norm is at most this.
  Derived& clipnorm(double value) { config_.clipnorm = value; return self(); }
  // Each gradient element is clipped to [-clipvalue, clipvalue].
  Derived& clipvalue(double value) { config_.clipvalue = value; return self(); }
  // All gradients are rescaled together so their global L2 norm is at most this.
  Derived& global_clipnorm(double value) { config_.global_clipnorm = value; return self(); }

  const OptimizerConfig& config() const { return config_; }

 protected:
  OptimizerConfig config_;

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace strata::optimizers
