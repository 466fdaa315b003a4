#include "framework/optimizers/adamw.h"

namespace strata::optimizers {
namespace {

const OptimizerConfig& checked(const AdamWOptions& options) {
  // Keras: AdamW's weight_decay must be a float; an unset one would make it plain Adam.
  if (!options.config().weight_decay) {
    throw ValueError("AdamW: weight_decay must be set (Keras default 0.004)");
  }
  return options.config();
}

}  // namespace

AdamW::AdamW(LearningRate learning_rate, double weight_decay, double beta_1, double beta_2,
             double epsilon, bool amsgrad)
    : AdamW(std::move(learning_rate), AdamWOptions()
                                          .weight_decay(weight_decay)
                                          .beta_1(beta_1)
                                          .beta_2(beta_2)
                                          .epsilon(epsilon)
                                          .amsgrad(amsgrad)) {}

AdamW::AdamW(LearningRate learning_rate, const AdamWOptions& options)
    : Adam("AdamW", std::move(learning_rate), checked(options), options.hyper_parameters()) {}

OptimizerUpdate AdamW::rule() const {
  OptimizerUpdate u = Adam::rule();
  u.kind = OptimizerKind::kAdamW;
  return u;
}

}  // namespace strata::optimizers
