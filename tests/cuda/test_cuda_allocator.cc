// The GPU caching allocator on a real device (skipped without one): a training-like loop reaches
// a steady state without cudaMalloc, out-of-memory errors name the size, and the memory options
// apply before the first allocation only. The rules themselves are tested without a GPU in
// tests/framework/memory/test_caching_allocator.cc.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <strata/strata.h>

#include "cuda/gpu_test_utils.h"
#include "framework/backend/gpu_memory.h"
#include "framework/backend/gpu_runtime.h"
#include "framework/memory/format_bytes.h"
#include "framework/memory/gpu_memory_settings.h"

namespace strata {
namespace {

constexpr size_t kMiB = size_t(1) << 20;

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

// One step of a small training-like computation on /gpu:0, finished before it returns.
float training_like_step() {
  DeviceScope scope(Device::gpu(0));
  Tensor x = full({256, 512}, 0.5);
  Tensor w = ones({512, 128});
  Tensor h = multiply(x, 2.0) + 1.0;  // activations of a few sizes
  Tensor y = reduce_sum(h, {1}, /*keepdims=*/true);
  Tensor g = multiply(w, 0.5) + 1.0;  // and parameter-sized ones
  // Exact in float32 whatever the summation order; item() waits for the GPU.
  return reduce_sum(y).item<float>() + reduce_sum(g).item<float>();
}

TEST(CudaAllocator, TrainingLoopReachesASteadyState) {
  STRATA_REQUIRE_GPU();
  const float first = training_like_step();
  training_like_step();
  const AllocatorStats warm = gpu::memory_stats(0);
  EXPECT_GT(warm.raw_allocations, 0u);
  for (int step = 0; step < 20; ++step) EXPECT_EQ(training_like_step(), first);
  const AllocatorStats later = gpu::memory_stats(0);
  EXPECT_EQ(later.raw_allocations, warm.raw_allocations);  // no cudaMalloc in the steady state
  EXPECT_EQ(later.raw_frees, warm.raw_frees);
  EXPECT_GE(later.cache_hits, warm.cache_hits + 20);
  EXPECT_EQ(later.in_use_bytes, warm.in_use_bytes);  // every step's tensors were returned
  const config::MemoryInfo info = config::get_memory_info(Device::gpu(0));
  EXPECT_EQ(info.current, later.in_use_bytes);
  EXPECT_GE(info.peak, info.current + 256 * 512 * 4);  // at least one activation was live
  config::reset_memory_stats(Device::gpu(0));
  EXPECT_EQ(config::get_memory_info(Device::gpu(0)).peak, info.current);
}

TEST(CudaAllocator, RequestLargerThanTheDeviceThrows) {
  STRATA_REQUIRE_GPU();
  const size_t total = gpu::properties(0).total_memory;
  const int64_t elements = int64_t(total / 2);  // float32: twice the device's memory
  try {
    Tensor t = Tensor::empty({elements}, DType::kFloat32, Device::gpu(0));
    FAIL() << "expected ResourceExhaustedError";
  } catch (const ResourceExhaustedError& e) {
    const std::string message = e.what();
    expect_contains(message, "/gpu:0 is out of memory");
    expect_contains(message, "tried to allocate " + format_bytes(size_t(elements) * 4));
    expect_contains(message, "free on the device");
  }
  // The device is still usable, and the failed cudaMalloc left no error behind for kernels.
  Tensor ok = full({1000}, 3.0, float32, Device::gpu(0));
  EXPECT_EQ(reduce_sum(ok).item<float>(), 3000.0f);
}

TEST(CudaAllocator, OptionsCannotChangeAfterTheFirstAllocation) {
  STRATA_REQUIRE_GPU();
  const Device g = Device::gpu(0);
  Tensor t = zeros({16}, float32, g);  // creates the allocator if no test did
  EXPECT_TRUE(gpu::memory_settings_frozen(0));
  try {
    config::set_memory_growth(g, !config::get_memory_growth(g));
    FAIL() << "expected StateError";
  } catch (const StateError& e) {
    expect_contains(e.what(), "Physical devices cannot be modified after being initialized");
    expect_contains(e.what(), "/gpu:0");
  }
  EXPECT_THROW(config::set_memory_limit(g, 1024), StateError);
  // empty_cache gives back what no tensor uses (with memory growth on; off, the reservation
  // stays), and leaves live tensors alone.
  { Tensor scratch = zeros({64 << 20}, float32, g); }  // 256 MiB: a segment of its own
  const AllocatorStats before = gpu::memory_stats(0);
  config::empty_cache(g);
  const AllocatorStats after = gpu::memory_stats(0);
  EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
  if (gpu::memory_settings(0).memory_growth) {
    EXPECT_LT(after.reserved_bytes, before.reserved_bytes);
    EXPECT_GT(after.raw_frees, before.raw_frees);
  } else {
    EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  }
  EXPECT_EQ(reduce_sum(t).item<float>(), 0.0f);
}

// Run by ctest in processes of their own (tests/CMakeLists.txt), since the options apply only
// before the GPU's first allocation: STRATA_TEST_GPU_MEMORY_CHILD=reserve sets a 256 MB limit
// with memory growth off, =grow the same limit with growth on.
TEST(CudaAllocator, MemoryLimitInAFreshProcess) {
  const char* mode_env = std::getenv("STRATA_TEST_GPU_MEMORY_CHILD");
  if (mode_env == nullptr) GTEST_SKIP() << "needs STRATA_TEST_GPU_MEMORY_CHILD (set by ctest)";
  STRATA_REQUIRE_GPU();
  const std::string mode = mode_env;
  const bool growth = mode == "grow";
  ASSERT_TRUE(mode == "grow" || mode == "reserve") << mode;
  const Device g = Device::gpu(0);
  ASSERT_FALSE(gpu::memory_settings_frozen(0)) << "something allocated on /gpu:0 first";
  config::set_memory_growth(g, growth);
  config::set_memory_limit(g, 256);
  EXPECT_EQ(config::get_memory_limit(g), 256);
  EXPECT_EQ(config::get_memory_growth(g), growth);

  Tensor small = zeros({1024}, float32, g);
  AllocatorStats stats = gpu::memory_stats(0);
  EXPECT_EQ(stats.raw_allocations, 1u);
  EXPECT_EQ(stats.reserved_bytes, growth ? 2 * kMiB : 256 * kMiB);

  Tensor a = zeros({int64_t(100 * kMiB / 4)}, float32, g);
  Tensor b = zeros({int64_t(100 * kMiB / 4)}, float32, g);
  try {
    Tensor c = zeros({int64_t(100 * kMiB / 4)}, float32, g);
    FAIL() << "expected ResourceExhaustedError";
  } catch (const ResourceExhaustedError& e) {
    expect_contains(e.what(), "tried to allocate 100.00 MiB");
    expect_contains(e.what(), "memory limit: 256.00 MiB");
    expect_contains(e.what(), growth ? "memory growth: on" : "memory growth: off");
  }
  // A freed block serves the next request of its size without asking the device.
  const size_t raw_before = gpu::memory_stats(0).raw_allocations;
  b = Tensor();
  Tensor c = ones({int64_t(100 * kMiB / 4)}, float32, g);
  EXPECT_EQ(gpu::memory_stats(0).raw_allocations, raw_before);
  EXPECT_EQ(reduce_sum(c).item<float>(), float(100 * kMiB / 4));
  stats = gpu::memory_stats(0);
  EXPECT_LE(stats.peak_reserved_bytes, 256 * kMiB);
  if (!growth) EXPECT_EQ(stats.raw_allocations, 1u);  // the reservation, never more
  EXPECT_THROW(config::set_memory_limit(g, 512), StateError);
}

}  // namespace
}  // namespace strata
