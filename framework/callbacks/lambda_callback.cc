#include "framework/callbacks/lambda_callback.h"

namespace strata {

void LambdaCallback::on_epoch_begin(int epoch, const Logs& logs) {
  if (fns_.on_epoch_begin_) fns_.on_epoch_begin_(epoch, logs);
}

void LambdaCallback::on_epoch_end(int epoch, const Logs& logs) {
  if (fns_.on_epoch_end_) fns_.on_epoch_end_(epoch, logs);
}

void LambdaCallback::on_train_batch_begin(int batch, const Logs& logs) {
  if (fns_.on_batch_begin_) fns_.on_batch_begin_(batch, logs);
}

void LambdaCallback::on_train_batch_end(int batch, const Logs& logs) {
  if (fns_.on_batch_end_) fns_.on_batch_end_(batch, logs);
}

void LambdaCallback::on_train_begin(const Logs& logs) {
  if (fns_.on_train_begin_) fns_.on_train_begin_(logs);
}

void LambdaCallback::on_train_end(const Logs& logs) {
  if (fns_.on_train_end_) fns_.on_train_end_(logs);
}

}  // namespace strata
