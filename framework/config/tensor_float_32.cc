#include "framework/config/tensor_float_32.h"

#include <atomic>

namespace strata::config {
namespace {

// Relaxed is enough: the flag orders nothing else, each kernel call reads it once.
std::atomic<bool> g_tf32_enabled{true};

}  // namespace

void enable_tensor_float_32_execution(bool enabled) {
  g_tf32_enabled.store(enabled, std::memory_order_relaxed);
}

bool tensor_float_32_execution_enabled() {
  return g_tf32_enabled.load(std::memory_order_relaxed);
}

}  // namespace strata::config
