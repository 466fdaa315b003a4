#include "framework/mixed_precision/global_policy.h"

#include <mutex>

#include "framework/core/error.h"

namespace strata::mixed_precision {
namespace {

// Layers may be constructed on several threads (replicas, data pipelines), so the policy is read
// and written under a lock rather than through a bare global.
std::mutex& policy_mutex() {
  static std::mutex m;
  return m;
}

DTypePolicy& policy_slot() {
  static DTypePolicy policy("float32");
  return policy;
}

}  // namespace

void set_global_policy(const DTypePolicy& policy) {
  if (!is_floating(policy.compute_dtype())) {
    throw ValueError("set_global_policy: the global policy must compute in a floating dtype, got '" +
                     policy.name() + "'; use one of float32, float16, bfloat16, float64, "
                     "mixed_float16, mixed_bfloat16 (give a non-floating layer its own policy "
                     "with Layer::set_dtype_policy)");
  }
  std::lock_guard<std::mutex> lock(policy_mutex());
  policy_slot() = policy;
}

DTypePolicy global_policy() {
  std::lock_guard<std::mutex> lock(policy_mutex());
  return policy_slot();
}

PolicyScope::PolicyScope(const DTypePolicy& policy) : previous_(global_policy()) {
  set_global_policy(policy);
}

PolicyScope::~PolicyScope() {
  std::lock_guard<std::mutex> lock(policy_mutex());
  policy_slot() = previous_;
}

}  // namespace strata::mixed_precision
