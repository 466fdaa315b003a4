#include "distribute/parameter_server/step_registry.h"

#include <map>
#include <mutex>

#include "framework/core/error.h"

namespace strata::distribute {
namespace {

template <typename Fn>
struct Registry {
  std::mutex mutex;
  std::map<std::string, Fn> functions;

  void add(const std::string& name, Fn fn, const char* what) {
    if (name.empty() || !fn) {
      throw ValueError(std::string("register_") + what + "_function: the name and the function "
                       "must both be given");
    }
    std::lock_guard<std::mutex> lock(mutex);
    functions[name] = std::move(fn);
  }

  Fn find(const std::string& name, const char* what) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = functions.find(name);
    if (it != functions.end()) return it->second;
    std::string known;
    for (const auto& [n, f] : functions) known += (known.empty() ? "'" : ", '") + n + "'";
    throw ValueError(std::string("no ") + what + " function is registered as '" + name +
                     "' in this binary (registered: " + (known.empty() ? "none" : known) +
                     "). Every task must run the same binary and call register_" + what +
                     "_function before it starts serving");
  }
};

Registry<StepFunction>& steps() {
  static Registry<StepFunction> r;
  return r;
}
Registry<DatasetFunction>& datasets() {
  static Registry<DatasetFunction> r;
  return r;
}

}  // namespace

data::Element StepContext::next() const {
  if (iterator == nullptr) {
    throw StateError("StepContext::next: this closure was scheduled without a per-worker "
                     "iterator; pass one to ClusterCoordinator::schedule");
  }
  std::optional<data::Element> element = iterator->next();
  if (!element) {
    throw StateError("StepContext::next: the per-worker dataset is exhausted; repeat() it in "
                     "its dataset function (workers take closures at their own pace, so a "
                     "finite dataset runs out on some of them)");
  }
  return std::move(*element);
}

void register_step_function(const std::string& name, StepFunction fn) {
  steps().add(name, std::move(fn), "step");
}
void register_dataset_function(const std::string& name, DatasetFunction fn) {
  datasets().add(name, std::move(fn), "dataset");
}
StepFunction find_step_function(const std::string& name) { return steps().find(name, "step"); }
DatasetFunction find_dataset_function(const std::string& name) {
  return datasets().find(name, "dataset");
}

}  // namespace strata::distribute
