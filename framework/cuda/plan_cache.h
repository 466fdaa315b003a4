// Internal to the CUDA backend: the thread-safe cache that keeps each library call's plan
// (descriptors, the chosen algorithm, its workspace size) per problem key, so the expensive part
// of a cuDNN / cuBLASLt call (descriptor setup, algorithm search) happens once per shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <unordered_map>

namespace strata::cuda {

// Keys are plain structs of integers without padding (checked at compile time), hashed and
// compared by their bytes: equal bytes mean equal problems.
template <typename Key>
struct BytewiseKeyHash {
  static_assert(std::has_unique_object_representations_v<Key>,
                "plan cache keys must be padding-free structs of integers");
  size_t operator()(const Key& k) const noexcept {
    return std::hash<std::string_view>()(
        std::string_view(reinterpret_cast<const char*>(&k), sizeof(Key)));
  }
};
template <typename Key>
struct BytewiseKeyEqual {
  bool operator()(const Key& a, const Key& b) const noexcept {
    return std::memcmp(&a, &b, sizeof(Key)) == 0;
  }
};

// Maps a key to an immutable plan built by `make` (returning std::shared_ptr<const Plan>) on the
// first request. Plans are never evicted (a model has a bounded set of shapes), and the caches
// themselves are never destroyed: destroying library descriptors during process teardown, after
// the CUDA runtime has shut down, would crash.
template <typename Key, typename Plan>
class PlanCache {
 public:
  template <typename Make>
  std::shared_ptr<const Plan> get(const Key& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    // Built outside the lock: an algorithm search takes milliseconds, and two threads building
    // the same plan at once is harmless (the first one stored wins).
    std::shared_ptr<const Plan> plan = make();
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.emplace(key, std::move(plan)).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<Key, std::shared_ptr<const Plan>, BytewiseKeyHash<Key>, BytewiseKeyEqual<Key>>
      map_;
};

// The largest power of two (at most 256) that divides the address: what cuBLASLt's and cuDNN's
// vectorised kernels care about. Views into a tensor (slices along axis 0) may be less aligned
// than fresh allocations, so plans are keyed by it.
inline int64_t pointer_alignment(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  int64_t alignment = 256;
  while (alignment > 1 && address % std::uintptr_t(alignment) != 0) alignment /= 2;
  return alignment;
}

}  // namespace strata::cuda
