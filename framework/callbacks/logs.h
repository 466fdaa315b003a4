// Logs: the named numbers a training step or epoch reports ("loss", "accuracy", "val_loss"...),
// in the order Keras shows them.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata {

class Logs {
 public:
  // Sets (or replaces, keeping its position) a value.
  void set(const std::string& key, double value);
  std::optional<double> get(const std::string& key) const;
  bool contains(const std::string& key) const { return get(key).has_value(); }
  // The value, or ValueError naming the key and the keys present.
  double at(const std::string& key) const;
  const std::vector<std::pair<std::string, double>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  void clear() { items_.clear(); }

 private:
  std::vector<std::pair<std::string, double>> items_;
};

}  // namespace strata
