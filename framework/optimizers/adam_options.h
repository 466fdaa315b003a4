// Options shared by Adam and AdamW (beta_1, beta_2, epsilon, amsgrad), as chained setters.
#pragma once

#include "framework/optimizers/optimizer_options.h"

namespace strata::optimizers {

struct AdamHyperParameters {
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
  bool amsgrad = false;
};

template <typename Derived>
class AdamLikeOptions : public OptimizerOptions<Derived> {
 public:
  Derived& beta_1(double value) { hyper_.beta_1 = value; return self(); }
  Derived& beta_2(double value) { hyper_.beta_2 = value; return self(); }
  Derived& epsilon(double value) { hyper_.epsilon = value; return self(); }
  Derived& amsgrad(bool value) { hyper_.amsgrad = value; return self(); }

  const AdamHyperParameters& hyper_parameters() const { return hyper_; }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  AdamHyperParameters hyper_;
};

class AdamOptions : public AdamLikeOptions<AdamOptions> {};

// AdamW's weight decay is on by default (Keras: weight_decay=0.004).
class AdamWOptions : public AdamLikeOptions<AdamWOptions> {
 public:
  AdamWOptions() { config_.weight_decay = 0.004; }
};

}  // namespace strata::optimizers
