// ProgbarLogger: Keras' progress bar.
//   verbose=1: "Epoch 1/5" then "469/469 [==============================] - 4s 9ms/step -
//              loss: 0.1234 - accuracy: 0.9612 - val_loss: ... - val_accuracy: ...", redrawn
//              in place on a terminal; written once per epoch when the output is not one.
//   verbose=2: one line per epoch: "469/469 - 4s - loss: 0.1234 - ... - 9ms/step".
//   verbose=0: nothing (fit does not add the logger).
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>

#include "framework/callbacks/callback.h"

namespace strata {

class ProgbarLogger : public Callback {
 public:
  // `out` defaults to stdout; `interactive` (redraw with '\r') defaults to isatty(stdout).
  explicit ProgbarLogger(std::ostream* out = nullptr, int interactive = -1);

  void on_train_begin(const Logs& logs) override;
  void on_train_end(const Logs& logs) override { in_fit_ = false; }
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_train_batch_end(int batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_test_begin(const Logs& logs) override;
  void on_test_batch_end(int batch, const Logs& logs) override;
  void on_test_end(const Logs& logs) override;
  // Its bar is complete from the epoch's end alone (params().steps): under
  // ParameterServerStrategy it prints a line per epoch (TensorFlow lets it through too).
  bool implements_batch_hooks() const override { return false; }

  // Keras' number format: %.4f, or %.4e for magnitudes at or below 1e-3.
  static std::string format_value(double v);
  // "[==========>...................]" for `current` of `target` steps (30 wide).
  static std::string bar(int64_t current, int64_t target);

 private:
  void render(int64_t current, const Logs& logs, bool final);

  std::ostream* out_;
  bool interactive_;
  bool in_fit_ = false;
  bool standalone_eval_ = false;  // evaluate() outside fit shows its own bar
  int64_t target_ = -1;
  int64_t seen_ = 0;  // steps done this epoch (the count when the total is unknown)
  std::chrono::steady_clock::time_point start_, last_draw_;
  size_t last_width_ = 0;
};

}  // namespace strata
