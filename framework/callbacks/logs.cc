#include "framework/callbacks/logs.h"

#include "framework/core/error.h"

namespace strata {

// Shared by the copies of one deferred Logs: computed once, by whichever copy reads first.
struct Logs::Deferred {
  std::function<Logs()> compute;
  std::optional<std::vector<std::pair<std::string, double>>> values;
};

Logs Logs::deferred(std::function<Logs()> compute) {
  Logs logs;
  logs.deferred_ = std::make_shared<Deferred>();
  logs.deferred_->compute = std::move(compute);
  return logs;
}

void Logs::resolve() const {
  if (!deferred_) return;
  if (!deferred_->values) deferred_->values = deferred_->compute().items();
  items_ = *deferred_->values;
  deferred_.reset();
}

void Logs::resolve_if_shared() const {
  if (deferred_ && deferred_.use_count() > 1 && !deferred_->values) {
    deferred_->values = deferred_->compute().items();
  }
}

void Logs::set(const std::string& key, double value) {
  resolve();
  for (auto& [k, v] : items_) {
    if (k == key) {
      v = value;
      return;
    }
  }
  items_.emplace_back(key, value);
}

std::optional<double> Logs::get(const std::string& key) const {
  for (const auto& [k, v] : items()) {
    if (k == key) return v;
  }
  return std::nullopt;
}

double Logs::at(const std::string& key) const {
  if (auto v = get(key)) return *v;
  std::string keys;
  for (const auto& [k, v] : items()) keys += (keys.empty() ? "" : ", ") + k;
  throw ValueError("logs: no value named '" + key + "'; available: " + (keys.empty() ? "none" : keys));
}

}  // namespace strata
