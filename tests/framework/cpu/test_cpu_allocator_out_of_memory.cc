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

}  // namespace
}  // namespace strata
