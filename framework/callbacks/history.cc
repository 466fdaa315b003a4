#include "framework/callbacks/history.h"

namespace strata {

// Like Keras, a History reused across fit() calls keeps appending.
void History::on_train_begin(const Logs&) {}

void History::on_epoch_end(int e, const Logs& logs) {
  epoch.push_back(e);
  for (const auto& [k, v] : logs.items()) history[k].push_back(v);
}

}  // namespace strata
