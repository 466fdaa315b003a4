// Internal: the options each GPU's caching allocator is created with, kept apart from the CUDA
// backend so they work (and are tested) in every build. config::set_memory_growth /
// set_memory_limit (framework/config/memory.h) write them; the CUDA backend freezes and reads a
// GPU's settings when its first allocation creates the allocator (framework/cuda/cuda_memory.cc).
// From then on they cannot change, as in TensorFlow, because the allocator's segments already
// follow them. Indices are not checked here: config:: checks them against the visible GPUs.
#pragma once

#include <cstddef>
#include <optional>

namespace strata::gpu {

struct MemorySettings {
  bool memory_growth = true;  // default: default_memory_growth()
  size_t memory_limit = 0;    // bytes; 0: none
};

// The default memory growth: STRATA_GPU_ALLOW_GROWTH, else TF_FORCE_GPU_ALLOW_GROWTH (TensorFlow's
// variable), else true. Read once per process; ValueError naming the variable for a value other
// than true/false.
bool default_memory_growth();
// What one such variable says: nullopt when unset (value == nullptr), true/false for "true" /
// "false" (any case), ValueError naming `name` and the fix otherwise.
std::optional<bool> parse_allow_growth(const char* name, const char* value);

// The settings of /gpu:index now (defaults until set).
MemorySettings memory_settings(int index);
// Change one setting; StateError naming the device once its allocator exists. `caller` names
// the public function in the message.
void set_memory_growth(int index, bool enable, const char* caller);
void set_memory_limit(int index, size_t bytes, const char* caller);

// Called by the backend as it creates /gpu:index's allocator: returns the settings, which can no
// longer change. Calling it again returns the same settings.
MemorySettings freeze_memory_settings(int index);
bool memory_settings_frozen(int index);

}  // namespace strata::gpu
