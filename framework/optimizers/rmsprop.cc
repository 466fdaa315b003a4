#include "framework/optimizers/rmsprop.h"

namespace strata::optimizers {

RMSprop::RMSprop(LearningRate learning_rate, double rho, double momentum, double epsilon,
                 bool centered)
    : RMSprop(std::move(learning_rate),
              RMSpropOptions().rho(rho).momentum(momentum).epsilon(epsilon).centered(centered)) {}

RMSprop::RMSprop(LearningRate learning_rate, const RMSpropOptions& options)
    : Optimizer("RMSprop", std::move(learning_rate), options.config()),
      rho_(options.rho_),
      momentum_(options.momentum_),
      epsilon_(options.epsilon_),
      centered_(options.centered_) {
  check_in_range("rho", rho_, 0.0, 1.0, /*hi_inclusive=*/false);
  check_in_range("momentum", momentum_, 0.0, 1.0, /*hi_inclusive=*/true);
  check_non_negative("epsilon", epsilon_);
}

std::vector<std::string> RMSprop::slot_names() const {
  // Keras 2 names; the order is the kernel's: rms, [mg], [momentum].
  std::vector<std::string> names{"rms"};
  if (centered_) names.push_back("mg");
  if (momentum_ > 0) names.push_back("momentum");
  return names;
}

OptimizerUpdate RMSprop::rule() const {
  OptimizerUpdate u;
  u.kind = OptimizerKind::kRMSprop;
  u.rho = float(rho_);
  u.momentum = float(momentum_);
  u.epsilon = float(epsilon_);
  u.centered = centered_;
  return u;
}

}  // namespace strata::optimizers
