#include "framework/callbacks/logs.h"

#include "framework/core/error.h"

namespace strata {

void Logs::set(const std::string& key, double value) {
  for (auto& [k, v] : items_) {
    if (k == key) {
      v = value;
      return;
    }
  }
  items_.emplace_back(key, value);
}

std::optional<double> Logs::get(const std::string& key) const {
  for (const auto& [k, v] : items_) {
    if (k == key) return v;
  }
  return std::nullopt;
}

double Logs::at(const std::string& key) const {
  if (auto v = get(key)) return *v;
  std::string keys;
  for (const auto& [k, v] : items_) keys += (keys.empty() ? "" : ", ") + k;
  throw ValueError("logs: no value named '" + key + "'; available: " + (keys.empty() ? "none" : keys));
}

}  // namespace strata
