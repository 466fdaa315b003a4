// config::set_memory_growth and friends: argument checks and the behaviour without GPUs, which
// every machine can run. What needs a GPU is in tests/cuda/test_cuda_allocator.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include <strata/strata.h>

#include "framework/backend/gpu_runtime.h"
#include "framework/cpu/cpu_caching_allocator.h"

namespace strata {
namespace {

template <typename E>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(MemoryConfig, CpuDevicesHaveNoMemoryOptions) {
  const Device cpu = Device::cpu(0);
  expect_contains(message_of<ValueError>([&] { config::set_memory_growth(cpu, true); }),
                  "config::set_memory_growth: expected a GPU (/gpu:N), got /cpu:0");
  EXPECT_THROW(config::get_memory_growth(cpu), ValueError);
  EXPECT_THROW(config::set_memory_limit(cpu, 1024), ValueError);
  EXPECT_THROW(config::get_memory_limit(cpu), ValueError);
  expect_contains(message_of<ValueError>([&] { config::get_memory_info(cpu); }),
                  "config::get_memory_info");
  EXPECT_THROW(config::reset_memory_stats(cpu), ValueError);
}

TEST(MemoryConfig, GpusThatDoNotExistAreRejected) {
  // One past the last visible GPU: /gpu:0 on a machine without GPUs or a build without CUDA.
  const Device missing = Device::gpu(gpu::device_count());
  for (const Device device : {missing, Device::gpu(-1)}) {
    SCOPED_TRACE(device.to_string());
    const std::string message =
        message_of<DeviceError>([&] { config::set_memory_growth(device, false); });
    expect_contains(message, "config::set_memory_growth(" + device.to_string() + "): no such GPU");
    expect_contains(message, "list_physical_devices");
    EXPECT_THROW(config::get_memory_growth(device), DeviceError);
    EXPECT_THROW(config::set_memory_limit(device, 1024), DeviceError);
    EXPECT_THROW(config::get_memory_limit(device), DeviceError);
    EXPECT_THROW(config::get_memory_info(device), DeviceError);
    EXPECT_THROW(config::reset_memory_stats(device), DeviceError);
    EXPECT_THROW(config::empty_cache(device), DeviceError);
  }
}

TEST(MemoryConfig, WithoutGpusTheErrorSaysWhy) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const std::string message =
      message_of<DeviceError>([] { config::get_memory_info(Device::gpu(0)); });
  expect_contains(message, "/gpu:0");
  expect_contains(message, gpu::built_with_cuda() ? "no GPU is visible to this process"
                                                  : "this build of Strata has no CUDA backend");
  // The portable loop configures nothing and throws nothing.
  for (Device g : config::list_physical_devices("GPU")) config::set_memory_growth(g, true);
  EXPECT_TRUE(config::list_physical_devices("GPU").empty());
}

TEST(MemoryConfig, LimitsMustBePositiveMegabytes) {
  // Checked before the device exists, so every machine sees the same errors.
  for (int64_t bad : {int64_t(0), int64_t(-1), std::numeric_limits<int64_t>::max()}) {
    SCOPED_TRACE(bad);
    const std::string message =
        message_of<ValueError>([&] { config::set_memory_limit(Device::gpu(0), bad); });
    expect_contains(message, "config::set_memory_limit(/gpu:0, " + std::to_string(bad) + ")");
    expect_contains(message, "positive number of MB");
  }
}

TEST(MemoryConfig, EmptyCacheOnTheCpuReturnsTheHostCache) {
  { Tensor big = zeros({1 << 20}); }  // 4 MB: kept by the CPU cache when freed
  EXPECT_GE(cpu::allocator_stats().cached_bytes, size_t(4) << 20);
  config::empty_cache(Device::cpu(0));
  EXPECT_EQ(cpu::allocator_stats().cached_bytes, 0u);
  expect_contains(message_of<DeviceError>([] { config::empty_cache(Device::cpu(99)); }),
                  "config::empty_cache(/cpu:99): no such CPU device");
}

}  // namespace
}  // namespace strata
