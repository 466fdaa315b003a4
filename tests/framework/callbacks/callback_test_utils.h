// Shared by the callback tests: the smallest compiled model a callback can act on.
#pragma once

#include <memory>
#include <stdexcept>

#include <strata/strata.h>

namespace strata::testing {

// Dense(1) on 3 features, SGD with `learning_rate`, mean squared error; built.
inline std::shared_ptr<Sequential> tiny_model(optimizers::LearningRate learning_rate = 0.05) {
  auto model =
      std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
  model->compile(std::make_shared<optimizers::SGD>(std::move(learning_rate)), "mse");
  model->build({-1, 3});
  return model;
}

// Simulates a crash: throws after `batches` training batches in total.
class CrashAfter : public Callback {
 public:
  explicit CrashAfter(int batches) : left_(batches) {}
  void on_train_batch_end(int, const Logs&) override {
    if (--left_ == 0) throw std::runtime_error("simulated crash");
  }

 private:
  int left_;
};

}  // namespace strata::testing
