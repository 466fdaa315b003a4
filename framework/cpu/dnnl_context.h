// Internal to the CPU backend: the one oneDNN engine, per-call streams, the primitive cache and
// memory-descriptor helpers shared by the cpu_dnnl_*.cc kernels. Only files in framework/cpu/
// include this header; nothing public sees a oneDNN type.
//
// Why a cache of our own: building a primitive descriptor costs 10-100 µs of implementation
// dispatch, more than many small kernels take to run. Each kernel family keys its primitives
// by a plain struct of dims and params, so a training loop builds them once and only executes
// afterwards. Primitives are created with a user-managed scratchpad (a per-thread buffer, see
// thread_buffer), which makes executing one cached primitive from several threads at once safe.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "framework/core/tensor.h"

namespace strata::cpu {

// The oneDNN kernels here are built for float32 only: DTypeError "<op>: the CPU backend supports
// float32 only, got <each tensor's dtype, joined by " and ">" unless every tensor is float32.
void check_float32(const char* op,
                   std::initializer_list<std::reference_wrapper<const Tensor>> tensors);

// The process-wide CPU engine (engine kind cpu, index 0).
const dnnl::engine& dnnl_engine();

// A fresh stream on the engine for one kernel call; applies Strata's thread count to the calling
// thread first (OpenMP settings are per thread).
dnnl::stream dnnl_stream();

// Primitive attributes every cached primitive uses: user-managed scratchpad.
dnnl::primitive_attr dnnl_default_attr();

// Grow-only, 64-byte aligned buffers owned by the calling thread, one per slot. A slot's pointer
// stays valid until the same slot is asked for more bytes on the same thread, so a kernel takes
// its slots once per call, before it executes anything. Slot kScratchSlot is reserved for
// primitive scratchpads (see execute()).
enum BufferSlot : int { kScratchSlot = 0, kBufferA, kBufferB, kBufferC, kNumBufferSlots };
void* thread_buffer(BufferSlot slot, size_t bytes);

// Executes `prim` on a fresh stream with `args` plus the scratchpad of `pd` (taken from this
// thread's scratch slot), and waits for it.
void execute(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
             std::unordered_map<int, dnnl::memory> args);

// A memory object over existing (caller-owned) data; oneDNN never frees it.
inline dnnl::memory make_memory(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, dnnl_engine(), const_cast<void*>(data));
}

// ---- memory descriptors for Strata's public layouts ----
// Activations [N, H, W, C] as oneDNN's logical {N, C, H, W} with nhwc strides.
dnnl::memory::desc nhwc_desc(int64_t n, int64_t h, int64_t w, int64_t c);
// HWIO filters [KH, KW, I/G, O] (Keras), as oneDNN's logical weights: {O, I, KH, KW} for one group,
// {G, O/G, I/G, KH, KW} for several, with the strides of the HWIO buffer (no copy).
dnnl::memory::desc hwio_weights_desc(int64_t kh, int64_t kw, int64_t in_per_group,
                                     int64_t out_channels, int64_t groups);
// Plain f32 descriptor from explicit dims and strides (elements).
dnnl::memory::desc strided_desc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides);

// ---- the primitive cache ----
// Hashes a key struct by its bytes: keys must be plain structs of integers without padding
// (checked at compile time), so equal bytes mean equal keys.
template <typename Key>
struct BytewiseHash {
  static_assert(std::has_unique_object_representations_v<Key>,
                "cache keys must be padding-free structs of integers");
  size_t operator()(const Key& k) const noexcept {
    return std::hash<std::string_view>()(
        std::string_view(reinterpret_cast<const char*>(&k), sizeof(Key)));
  }
};
template <typename Key>
struct BytewiseEqual {
  bool operator()(const Key& a, const Key& b) const noexcept {
    return std::memcmp(&a, &b, sizeof(Key)) == 0;
  }
};

// Thread-safe map from a key struct to an immutable entry of primitives (built by `make` on the
// first request). Entries are never evicted: a model has a bounded set of shapes.
template <typename Key, typename Entry>
class PrimitiveCache {
 public:
  template <typename Make>
  std::shared_ptr<const Entry> get(const Key& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    // Built outside the lock: descriptor creation is slow and two threads building the same
    // entry at once is harmless (the first one stored wins).
    auto entry = std::make_shared<const Entry>(make());
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.emplace(key, std::move(entry)).first->second;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::shared_ptr<const Entry>, BytewiseHash<Key>, BytewiseEqual<Key>>
      map_;
};

}  // namespace strata::cpu
