// History: what fit() returns; every epoch's logs, keyed by name (Keras' History.history).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "framework/callbacks/callback.h"

namespace strata {

class History : public Callback {
 public:
  bool implements_batch_hooks() const override { return false; }  // epoch-level only
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;

  // history["loss"][i] is epoch epoch()[i]'s loss.
  std::map<std::string, std::vector<double>> history;
  std::vector<int> epoch;
};

}  // namespace strata
