#include "framework/callbacks/terminate_on_nan.h"

#include <cmath>
#include <iostream>

#include "framework/callbacks/monitor_mode.h"
#include "framework/model/model.h"

namespace strata {

void TerminateOnNaN::on_train_batch_end(int batch, const Logs& logs) {
  const std::optional<double> loss = logs.get("loss");
  if (!loss || std::isfinite(*loss)) return;
  std::cout << "Batch " << batch << ": Invalid loss, terminating training" << std::endl;
  model_of(*this, "TerminateOnNaN").stop_training = true;
}

}  // namespace strata
