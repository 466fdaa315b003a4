#include <gtest/gtest.h>

#include <cstdint>

#include <strata/strata.h>

#include "framework/cpu/cpu_caching_allocator.h"

namespace strata {
namespace {

TEST(CachingAllocator, ReusesLargeBlocksAndKeepsAlignment) {
  cpu::empty_cache();
  const cpu::AllocatorStats before = cpu::allocator_stats();
  void* first = nullptr;
  {
    Tensor a = zeros({1 << 20});  // 4 MB: cached on free
    first = a.raw_data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  }
  EXPECT_GE(cpu::allocator_stats().cached_bytes, size_t(4) << 20);
  Tensor b = ones({1 << 20});
  EXPECT_EQ(b.raw_data(), first);  // the same block, no new pages
  EXPECT_EQ(cpu::allocator_stats().hits, before.hits + 1);
  EXPECT_EQ(b.to_vector<float>()[12345], 1.0f);  // reused memory is fully rewritten
  // A much smaller request does not take the big block.
  Tensor c = zeros({1 << 17});
  EXPECT_NE(c.raw_data(), first);
  cpu::empty_cache();
  EXPECT_EQ(cpu::allocator_stats().cached_bytes, 0u);
}

}  // namespace
}  // namespace strata
