// Logs: the named numbers a training step or epoch reports ("loss", "accuracy", "val_loss"...),
// in the order Keras shows them.
//
// The logs fit() passes to on_*_batch_end are deferred: the values are computed the first time
// a callback reads them. On a GPU the metrics live in device memory and reading one waits for the
// step to finish, so a step whose logs nobody reads (no progress-bar redraw this time, no
// callback that looks) never stalls the queue of GPU work. A copy a callback keeps holds that
// step's values: fit() resolves kept copies before the next step.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata {

class Logs {
 public:
  Logs() = default;
  // Logs whose values `compute` gives when first read.
  static Logs deferred(std::function<Logs()> compute);

  // Sets (or replaces, keeping its position) a value.
  void set(const std::string& key, double value);
  std::optional<double> get(const std::string& key) const;
  bool contains(const std::string& key) const { return get(key).has_value(); }
  // The value, or ValueError naming the key and the keys present.
  double at(const std::string& key) const;
  const std::vector<std::pair<std::string, double>>& items() const {
    resolve();
    return items_;
  }
  bool empty() const { return items().empty(); }
  void clear() {
    deferred_.reset();
    items_.clear();
  }
  // Computes deferred values now if a copy of these logs is still held elsewhere (a callback
  // kept it), so that copy shows this step's values; costs nothing when nobody kept one.
  void resolve_if_shared() const;

 private:
  struct Deferred;
  void resolve() const;
  mutable std::vector<std::pair<std::string, double>> items_;
  mutable std::shared_ptr<Deferred> deferred_;  // null once resolved (or never deferred)
};

}  // namespace strata
