#include "framework/optimizers/adam.h"

namespace strata::optimizers {

Adam::Adam(LearningRate learning_rate, double beta_1, double beta_2, double epsilon,
           bool amsgrad)
    : Adam(std::move(learning_rate),
           AdamOptions().beta_1(beta_1).beta_2(beta_2).epsilon(epsilon).amsgrad(amsgrad)) {}

Adam::Adam(LearningRate learning_rate, const AdamOptions& options)
    : Adam("Adam", std::move(learning_rate), options.config(), options.hyper_parameters()) {}

Adam::Adam(const std::string& class_name, LearningRate learning_rate,
           const OptimizerConfig& config, const AdamHyperParameters& hyper)
    : Optimizer(class_name, std::move(learning_rate), config), hyper_(hyper) {
  check_in_range("beta_1", hyper.beta_1, 0.0, 1.0, /*hi_inclusive=*/false);
  check_in_range("beta_2", hyper.beta_2, 0.0, 1.0, /*hi_inclusive=*/false);
  check_non_negative("epsilon", hyper.epsilon);
}

std::vector<std::string> Adam::slot_names() const {
  if (hyper_.amsgrad) return {"m", "v", "vhat"};
  return {"m", "v"};
}

OptimizerUpdate Adam::rule() const {
  OptimizerUpdate u;
  u.kind = OptimizerKind::kAdam;
  u.beta_1 = float(hyper_.beta_1);
  u.beta_2 = float(hyper_.beta_2);
  u.epsilon = float(hyper_.epsilon);
  u.amsgrad = hyper_.amsgrad;
  return u;
}

}  // namespace strata::optimizers
