#include "framework/callbacks/monitor_mode.h"

#include <iostream>
#include <limits>

#include "framework/core/error.h"

namespace strata {
namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool auto_is_max(const std::string& monitor, AutoModeRule rule) {
  switch (rule) {
    case AutoModeRule::kModelCheckpoint:
      return contains(monitor, "acc") || starts_with(monitor, "fmeasure") ||
             starts_with(monitor, "auc");
    case AutoModeRule::kEarlyStopping:
      return ends_with(monitor, "acc") || ends_with(monitor, "accuracy") ||
             ends_with(monitor, "auc");
    case AutoModeRule::kReduceLROnPlateau:
      return contains(monitor, "acc");
  }
  return false;
}

}  // namespace

MonitorMode resolve_monitor_mode(const std::string& who, const std::string& mode,
                                 const std::string& monitor, AutoModeRule rule) {
  if (mode == "min") return MonitorMode::kMin;
  if (mode == "max") return MonitorMode::kMax;
  if (mode == "auto") return auto_is_max(monitor, rule) ? MonitorMode::kMax : MonitorMode::kMin;
  throw ValueError(who + ": unknown mode \"" + mode + "\"; expected \"auto\", \"min\" or \"max\"");
}

const char* to_string(MonitorMode mode) { return mode == MonitorMode::kMin ? "min" : "max"; }

double worst_value(MonitorMode mode) {
  const double inf = std::numeric_limits<double>::infinity();
  return mode == MonitorMode::kMin ? inf : -inf;
}

bool is_improvement(MonitorMode mode, double current, double reference, double min_delta) {
  return mode == MonitorMode::kMin ? current < reference - min_delta
                                   : current > reference + min_delta;
}

void warn(const std::string& message) { std::cerr << "WARNING: " << message << std::endl; }

std::string joined_keys(const Logs& logs) {
  std::string keys;
  for (const auto& [k, v] : logs.items()) keys += (keys.empty() ? "" : ",") + k;
  return keys;
}

Model& model_of(const Callback& callback, const char* who) {
  if (!callback.model()) {
    throw StateError(std::string(who) +
                     ": no model is set; Model::fit sets it, or call "
                     "set_model(&model) before calling the callback's hooks yourself");
  }
  return *callback.model();
}

}  // namespace strata
