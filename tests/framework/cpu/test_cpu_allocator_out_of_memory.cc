// The CPU allocator when the system refuses memory: a ResourceExhaustedError naming the request
// and what is really held, with its figures as they were before the request.
#include <gtest/gtest.h>

#include <string>

#include <strata/strata.h>

#include "framework/cpu/cpu_caching_allocator.h"
#include "framework/memory/format_bytes.h"
#include "support/sanitizers.h"

namespace strata {
namespace {

TEST(CpuAllocator, OutOfMemoryRestoresFiguresAndNamesWhatIsHeld) {
  // Under ASan, ctest runs this test once more with allocator_may_return_null=1 (tests/CMakeLists).
  if (!testing::malloc_failure_returns_null()) {
    GTEST_SKIP() << "needs ASAN_OPTIONS=allocator_may_return_null=1 under AddressSanitizer";
  }
  cpu::empty_cache();
  Tensor held = zeros({1 << 20});  // 4 MiB, so "held by live tensors" is not zero
  const cpu::AllocatorStats before = cpu::allocator_stats();
  // 2^47 bytes: more than a 47-bit user address space holds, so no overcommit setting grants it.
  const int64_t elements = int64_t(1) << 45;  // float32
  try {
    Tensor huge = Tensor::empty({elements});
    FAIL() << "a 128 TiB tensor was allocated";
  } catch (const ResourceExhaustedError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("140737488355328 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find(format_bytes(before.allocated_bytes) + " held by live tensors"),
              std::string::npos)
        << message;
  }
  const cpu::AllocatorStats after = cpu::allocator_stats();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.hits, before.hits);
  EXPECT_EQ(after.misses, before.misses);
  // The allocator still works, and its figures still balance.
  {
    Tensor next = ones({1 << 20});
    EXPECT_EQ(cpu::allocator_stats().allocated_bytes, before.allocated_bytes + (size_t(4) << 20));
  }
  EXPECT_EQ(cpu::allocator_stats().allocated_bytes, before.allocated_bytes);
}

TEST(CpuAllocator, AbsurdRequestIsRefusedBeforeAskingTheSystem) {
  const cpu::AllocatorStats before = cpu::allocator_stats();
  // Near SIZE_MAX the block rounding would wrap around to a tiny block.
  EXPECT_THROW(cpu::cached_allocate(~size_t(0) - 100), ResourceExhaustedError);
  EXPECT_EQ(cpu::allocator_stats().allocated_bytes, before.allocated_bytes);
}

TEST(CpuAllocator, AllocationLimitIsResourceExhaustedAfterEmptyingTheCache) {
  cpu::empty_cache();
  { Tensor idle = zeros({int64_t(8) << 20}); }  // 32 MiB, freed into the cache
  ASSERT_GE(cpu::allocator_stats().cached_bytes, size_t(32) << 20);
  const size_t held = cpu::allocator_stats().allocated_bytes;
  cpu::set_allocation_limit(held + (size_t(48) << 20));
  // 40 MiB fits once the idle 32 MiB are returned: the cache gives way to the request.
  {
    Tensor fits = zeros({int64_t(10) << 20});
    EXPECT_EQ(cpu::allocator_stats().cached_bytes, 0u);
    // Another 40 MiB does not.
    EXPECT_THROW(Tensor::empty({int64_t(10) << 20}), ResourceExhaustedError);
  }
  cpu::set_allocation_limit(0);
  Tensor unlimited = zeros({int64_t(32) << 20});
  EXPECT_EQ(unlimited.numel(), int64_t(32) << 20);
}

}  // namespace
}  // namespace strata
