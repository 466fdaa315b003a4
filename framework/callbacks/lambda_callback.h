// LambdaCallback: Keras' callback built from functions, for one-off hooks.
//
//   auto print_loss = std::make_shared<LambdaCallback>(LambdaCallbackOptions().on_epoch_end(
//       [](int epoch, const Logs& logs) { std::cout << logs.at("loss") << "\n"; }));
//
// on_batch_begin / on_batch_end run for training batches (Keras 2's on_batch_* are its
// on_train_batch_* hooks). A function left empty does nothing.
#pragma once

#include <functional>

#include "framework/callbacks/callback.h"

namespace strata {

struct LambdaCallbackOptions {
  using EpochFn = std::function<void(int epoch, const Logs& logs)>;
  using BatchFn = std::function<void(int batch, const Logs& logs)>;
  using TrainFn = std::function<void(const Logs& logs)>;

  EpochFn on_epoch_begin_, on_epoch_end_;
  BatchFn on_batch_begin_, on_batch_end_;
  TrainFn on_train_begin_, on_train_end_;

  LambdaCallbackOptions& on_epoch_begin(EpochFn f) { on_epoch_begin_ = std::move(f); return *this; }
  LambdaCallbackOptions& on_epoch_end(EpochFn f) { on_epoch_end_ = std::move(f); return *this; }
  LambdaCallbackOptions& on_batch_begin(BatchFn f) { on_batch_begin_ = std::move(f); return *this; }
  LambdaCallbackOptions& on_batch_end(BatchFn f) { on_batch_end_ = std::move(f); return *this; }
  LambdaCallbackOptions& on_train_begin(TrainFn f) { on_train_begin_ = std::move(f); return *this; }
  LambdaCallbackOptions& on_train_end(TrainFn f) { on_train_end_ = std::move(f); return *this; }
};

class LambdaCallback : public Callback {
 public:
  explicit LambdaCallback(LambdaCallbackOptions functions = {}) : fns_(std::move(functions)) {}

  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_batch_begin(int batch, const Logs& logs) override;
  void on_train_batch_end(int batch, const Logs& logs) override;
  void on_train_begin(const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  // Batch-level only with an on_batch_* function.
  bool implements_batch_hooks() const override {
    return bool(fns_.on_batch_begin_) || bool(fns_.on_batch_end_);
  }

  const LambdaCallbackOptions& functions() const { return fns_; }

 private:
  LambdaCallbackOptions fns_;
};

}  // namespace strata
