// TerminateOnNaN: Keras' callback that stops fit as soon as a training batch reports a NaN or
// infinite "loss", printing "Batch N: Invalid loss, terminating training" (N 0-based) on stdout.
// fit checks stop_training after every batch, so the epoch ends there.
#pragma once

#include "framework/callbacks/callback.h"

namespace strata {

class TerminateOnNaN : public Callback {
 public:
  void on_train_batch_end(int batch, const Logs& logs) override;
};

}  // namespace strata
