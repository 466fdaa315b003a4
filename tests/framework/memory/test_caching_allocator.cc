// The device caching allocator over a fake device of fixed capacity: every rule of
// framework/memory/caching_allocator.h, checked without a GPU.
#include "framework/memory/caching_allocator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "framework/core/error.h"
#include "framework/memory/format_bytes.h"

namespace strata {
namespace {

constexpr size_t kMiB = size_t(1) << 20;
constexpr CachingAllocator::StreamId kStream = 1;

// A device with `capacity` bytes. Addresses are integers never dereferenced; segments are spaced
// apart so that blocks of different segments are never adjacent.
struct FakeDevice {
  explicit FakeDevice(size_t cap) : capacity(cap) {}
  size_t capacity;
  size_t used = 0;
  size_t allocations = 0, frees = 0;
  size_t bad_frees = 0;      // frees of unknown segments or with the wrong size
  bool throw_next = false;   // the next allocate() fails as a lost device would
  std::map<uintptr_t, size_t> segments;
  uintptr_t next_address = uintptr_t(1) << 32;
};

class FakeRawMemory final : public RawMemory {
 public:
  explicit FakeRawMemory(FakeDevice& device) : d_(device) {}

  void* allocate(size_t nbytes) override {
    if (d_.throw_next) {
      d_.throw_next = false;
      throw DeviceError("fake device lost");
    }
    if (nbytes > d_.capacity - d_.used) return nullptr;
    const uintptr_t address = d_.next_address;
    d_.next_address += nbytes + 64 * kMiB;
    d_.segments[address] = nbytes;
    d_.used += nbytes;
    ++d_.allocations;
    return reinterpret_cast<void*>(address);
  }

  void free(void* ptr, size_t nbytes) noexcept override {
    auto it = d_.segments.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == d_.segments.end() || it->second != nbytes) {
      ++d_.bad_frees;
      return;
    }
    d_.segments.erase(it);
    d_.used -= nbytes;
    ++d_.frees;
  }

  size_t device_free_bytes() const noexcept override { return d_.capacity - d_.used; }

 private:
  FakeDevice& d_;
};

std::unique_ptr<CachingAllocator> make_allocator(FakeDevice& device, size_t limit = 0,
                                                 bool growth = true) {
  AllocatorOptions options;
  options.device_name = "/fake:0";
  options.memory_limit = limit;
  options.memory_growth = growth;
  return std::make_unique<CachingAllocator>(std::make_unique<FakeRawMemory>(device), options);
}

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// The ResourceExhaustedError `f` throws, as text ("" and a test failure when none).
template <typename F>
std::string out_of_memory_message(F f) {
  try {
    f();
  } catch (const ResourceExhaustedError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected ResourceExhaustedError";
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(DeviceCachingAllocator, SteadyStateMakesNoRawAllocations) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device);
  const std::vector<size_t> sizes = {1, 100, 4096, 700 * 1000, 3 * kMiB + 5, 25 * kMiB};
  auto step = [&] {
    std::vector<void*> blocks;
    for (size_t n : sizes) blocks.push_back(a->allocate(n, kStream));
    for (void* p : blocks) a->deallocate(p);
  };
  step();
  const AllocatorStats first = a->stats();
  // One 2 MiB small segment for the four small requests, 4 MiB and 26 MiB large ones.
  EXPECT_EQ(first.raw_allocations, 3u);
  EXPECT_EQ(first.reserved_bytes, (2 + 4 + 26) * kMiB);
  for (int i = 0; i < 100; ++i) step();
  const AllocatorStats later = a->stats();
  EXPECT_EQ(later.raw_allocations, 3u);
  EXPECT_EQ(later.raw_frees, 0u);
  EXPECT_EQ(device.allocations, 3u);
  EXPECT_EQ(later.allocations, 101 * sizes.size());
  EXPECT_EQ(later.cache_hits, first.cache_hits + 100 * sizes.size());
  EXPECT_EQ(later.reserved_bytes, first.reserved_bytes);
  EXPECT_EQ(later.in_use_bytes, 0u);
  EXPECT_EQ(later.requested_bytes, 0u);
}

TEST(DeviceCachingAllocator, SplitsAndCoalescesLargeBlocks) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device);
  void* segment = a->allocate(30 * kMiB, kStream);
  a->deallocate(segment);
  // Three blocks cut from the cached 30 MiB segment, in address order.
  void* x = a->allocate(10 * kMiB, kStream);
  void* y = a->allocate(10 * kMiB, kStream);
  void* z = a->allocate(10 * kMiB, kStream);
  EXPECT_EQ(addr(x), addr(segment));
  EXPECT_EQ(addr(y), addr(segment) + 10 * kMiB);
  EXPECT_EQ(addr(z), addr(segment) + 20 * kMiB);
  EXPECT_EQ(a->stats().raw_allocations, 1u);

  // The middle alone: its hole serves the same size again, and nothing else merged with it.
  a->deallocate(y);
  void* again = a->allocate(10 * kMiB, kStream);
  EXPECT_EQ(again, y);
  a->deallocate(again);
  // The middle and its left neighbour merge: a 20 MiB request fits where they were.
  a->deallocate(x);
  void* twenty = a->allocate(20 * kMiB, kStream);
  EXPECT_EQ(twenty, segment);
  a->deallocate(twenty);
  // And with the right one, the whole segment is one block again.
  a->deallocate(z);
  void* whole = a->allocate(30 * kMiB, kStream);
  EXPECT_EQ(whole, segment);
  EXPECT_EQ(a->allocated_size(whole), 30 * kMiB);
  const AllocatorStats stats = a->stats();
  EXPECT_EQ(stats.raw_allocations, 1u);
  EXPECT_EQ(stats.segments, 1u);
  a->deallocate(whole);
}

TEST(DeviceCachingAllocator, SmallRequestsShareTwoMebibyteSegments) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device);
  void* p = a->allocate(1000, kStream);
  void* q = a->allocate(1000, kStream);
  void* r = a->allocate(1, kStream);
  EXPECT_EQ(a->allocated_size(p), 1024u);  // rounded up to 512 bytes
  EXPECT_EQ(addr(q), addr(p) + 1024);
  EXPECT_EQ(addr(r), addr(p) + 2048);
  EXPECT_EQ(a->stats().reserved_bytes, CachingAllocator::kSmallSegment);
  a->deallocate(q);
  a->deallocate(p);
  a->deallocate(r);
  // Merged back: the largest small request fits in the same segment.
  void* big = a->allocate(CachingAllocator::kSmallSize, kStream);
  EXPECT_EQ(big, p);
  EXPECT_EQ(a->stats().raw_allocations, 1u);
  // Requests over 1 MiB never come from the small pool.
  void* large = a->allocate(CachingAllocator::kSmallSize + 1, kStream);
  EXPECT_EQ(a->stats().raw_allocations, 2u);
  a->deallocate(big);
  a->deallocate(large);
}

TEST(DeviceCachingAllocator, LargeBlocksKeepRemaindersOfAtMostOneMebibyte) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device);
  // 3 MiB + 512 bytes: a 4 MiB segment whose rest (1 MiB - 512) no large request could use.
  void* p = a->allocate(3 * kMiB + 1, kStream);
  EXPECT_EQ(a->allocated_size(p), 4 * kMiB);
  EXPECT_EQ(a->stats().in_use_bytes, 4 * kMiB);
  EXPECT_EQ(a->stats().requested_bytes, 3 * kMiB + 1);
  a->deallocate(p);
  // A 2 MiB rest is worth keeping: the block is split.
  void* q = a->allocate(2 * kMiB, kStream);
  EXPECT_EQ(q, p);
  EXPECT_EQ(a->allocated_size(q), 2 * kMiB);
  void* r = a->allocate(2 * kMiB, kStream);
  EXPECT_EQ(addr(r), addr(p) + 2 * kMiB);
  EXPECT_EQ(a->stats().raw_allocations, 1u);
  a->deallocate(q);
  a->deallocate(r);
}

TEST(DeviceCachingAllocator, StreamsDoNotShareFreedBlocks) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device);
  void* on_one = a->allocate(4 * kMiB, 1);
  a->deallocate(on_one);
  void* on_two = a->allocate(4 * kMiB, 2);  // stream 2 may not take stream 1's block
  EXPECT_NE(on_two, on_one);
  EXPECT_EQ(a->stats().raw_allocations, 2u);
  a->deallocate(on_two);
  void* one_again = a->allocate(4 * kMiB, 1);
  void* two_again = a->allocate(4 * kMiB, 2);
  EXPECT_EQ(one_again, on_one);
  EXPECT_EQ(two_again, on_two);
  EXPECT_EQ(a->stats().raw_allocations, 2u);
  // Small pool too.
  void* small_one = a->allocate(100, 1);
  void* small_two = a->allocate(100, 2);
  EXPECT_EQ(a->stats().raw_allocations, 4u);
  for (void* p : {one_again, two_again, small_one, small_two}) a->deallocate(p);
}

TEST(DeviceCachingAllocator, MemoryLimitIsEnforced) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device, /*limit=*/64 * kMiB);
  void* first = a->allocate(40 * kMiB, kStream);
  const std::string message =
      out_of_memory_message([&] { a->allocate(40 * kMiB, kStream); });
  expect_contains(message, "/fake:0 is out of memory");
  expect_contains(message, "tried to allocate 40.00 MiB (41943040 bytes)");
  expect_contains(message, "In use by tensors: 40.00 MiB");
  expect_contains(message, "reserved by Strata's allocator: 40.00 MiB");
  expect_contains(message, "memory limit: 64.00 MiB");
  expect_contains(message, "free on the device: 984.00 MiB");
  expect_contains(message, "smaller batch size");
  expect_contains(message, "mixed precision");
  expect_contains(message, "config::set_memory_limit");
  expect_contains(message, "config::set_memory_growth");
  AllocatorStats stats = a->stats();
  EXPECT_EQ(stats.out_of_memory_errors, 1u);
  EXPECT_EQ(stats.reserved_bytes, 40 * kMiB);
  EXPECT_EQ(stats.in_use_bytes, 40 * kMiB);

  // Once the 40 MiB are free, 60 MiB fit: the cached segment goes back to make room.
  a->deallocate(first);
  void* sixty = a->allocate(60 * kMiB, kStream);
  stats = a->stats();
  EXPECT_EQ(stats.raw_frees, 1u);
  EXPECT_EQ(stats.reserved_bytes, 60 * kMiB);
  EXPECT_LE(stats.peak_reserved_bytes, 64 * kMiB);
  a->deallocate(sixty);
}

TEST(DeviceCachingAllocator, NearTheLimitSegmentsAreNotRoundedUp) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device, /*limit=*/41 * kMiB);
  // Rounded to 2 MiB the segment would be 42 MiB, over the limit; the request itself fits.
  void* p = a->allocate(41 * kMiB - 512, kStream);
  EXPECT_EQ(a->stats().reserved_bytes, 41 * kMiB - 512);
  EXPECT_THROW(a->allocate(1024, kStream), ResourceExhaustedError);  // 512 bytes left: too few
  a->deallocate(p);
}

TEST(DeviceCachingAllocator, RetriesAfterReturningTheCache) {
  FakeDevice device(64 * kMiB);
  auto a = make_allocator(device);
  a->deallocate(a->allocate(40 * kMiB, kStream));
  // The device has 24 MiB left, too few for 50 MiB, until the cached 40 MiB go back.
  void* p = a->allocate(50 * kMiB, kStream);
  AllocatorStats stats = a->stats();
  EXPECT_EQ(stats.raw_frees, 1u);
  EXPECT_EQ(stats.raw_allocations, 2u);
  EXPECT_EQ(stats.reserved_bytes, 50 * kMiB);
  EXPECT_EQ(device.used, 50 * kMiB);
  // Nothing cached left to return: out of memory, with the device's figure.
  const std::string message = out_of_memory_message([&] { a->allocate(30 * kMiB, kStream); });
  expect_contains(message, "tried to allocate 30.00 MiB");
  expect_contains(message, "memory limit: none");
  expect_contains(message, "free on the device: 14.00 MiB");
  expect_contains(message, "memory growth: on");
  a->deallocate(p);
  EXPECT_EQ(device.bad_frees, 0u);
}

TEST(DeviceCachingAllocator, WithoutGrowthReservesOneSegmentUpFront) {
  FakeDevice device(256 * kMiB);
  auto a = make_allocator(device, /*limit=*/0, /*growth=*/false);
  EXPECT_EQ(device.allocations, 0u);  // nothing before the first request
  void* first = a->allocate(1000, kStream);
  // The device's free memory less an eighth (at most 1.5 GiB) for the CUDA libraries.
  EXPECT_EQ(a->stats().reserved_bytes, 224 * kMiB);
  EXPECT_EQ(device.allocations, 1u);
  // Small requests are cut from it as finely as in the small pool.
  void* second = a->allocate(1000, kStream);
  EXPECT_EQ(addr(second), addr(first) + 1024);

  std::mt19937 rng(7);
  std::vector<void*> live;
  for (int i = 0; i < 500; ++i) {
    if (live.size() < 20 && rng() % 3 != 0) {
      live.push_back(a->allocate(rng() % (8 * kMiB), kStream));
    } else if (!live.empty()) {
      a->deallocate(live.back());
      live.pop_back();
    }
  }
  for (void* p : live) a->deallocate(p);
  const std::string message = out_of_memory_message([&] { a->allocate(300 * kMiB, kStream); });
  expect_contains(message, "tried to allocate 300.00 MiB");
  expect_contains(message, "memory growth: off");
  a->empty_cache();  // keeps the reservation
  const AllocatorStats stats = a->stats();
  EXPECT_EQ(stats.raw_allocations, 1u);
  EXPECT_EQ(stats.raw_frees, 0u);
  EXPECT_EQ(stats.reserved_bytes, 224 * kMiB);
  EXPECT_EQ(device.allocations, 1u);
  EXPECT_EQ(stats.in_use_bytes, 2048u);
  // The reservation serves one stream.
  EXPECT_THROW(a->allocate(1000, kStream + 1), StateError);
  a->deallocate(first);
  a->deallocate(second);
}

TEST(DeviceCachingAllocator, WithoutGrowthTheLimitIsReserved) {
  FakeDevice device(256 * kMiB);
  auto a = make_allocator(device, /*limit=*/100 * kMiB, /*growth=*/false);
  void* p = a->allocate(10 * kMiB, kStream);
  EXPECT_EQ(a->stats().reserved_bytes, 100 * kMiB);
  void* q = a->allocate(90 * kMiB, kStream);  // exactly the rest
  EXPECT_EQ(addr(q), addr(p) + 10 * kMiB);
  EXPECT_THROW(a->allocate(1, kStream), ResourceExhaustedError);
  EXPECT_EQ(device.allocations, 1u);
  a->deallocate(p);
  a->deallocate(q);
}

TEST(DeviceCachingAllocator, WithoutGrowthAFailedReservationSaysWhy) {
  FakeDevice device(256 * kMiB);
  auto a = make_allocator(device, /*limit=*/512 * kMiB, /*growth=*/false);
  const std::string message = out_of_memory_message([&] { a->allocate(1000, kStream); });
  expect_contains(message, "could not reserve 512.00 MiB");
  expect_contains(message, "free on the device: 256.00 MiB");
  expect_contains(message, "config::set_memory_growth");
  EXPECT_EQ(a->stats().reserved_bytes, 0u);
  EXPECT_EQ(a->stats().out_of_memory_errors, 1u);
}

TEST(DeviceCachingAllocator, ReservationWithoutGrowth) {
  const size_t kGiB = size_t(1) << 30;
  EXPECT_EQ(CachingAllocator::reservation_without_growth(80 * kGiB, 0), 80 * kGiB - 3 * kGiB / 2);
  EXPECT_EQ(CachingAllocator::reservation_without_growth(256 * kMiB, 0), 224 * kMiB);
  EXPECT_EQ(CachingAllocator::reservation_without_growth(0, 0), 0u);
  EXPECT_EQ(CachingAllocator::reservation_without_growth(80 * kGiB, 1000), 512u);  // whole blocks
}

TEST(DeviceCachingAllocator, StatsAndPeaks) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device);
  void* p = a->allocate(10 * kMiB, kStream);
  void* q = a->allocate(20 * kMiB - 100, kStream);
  AllocatorStats stats = a->stats();
  EXPECT_EQ(stats.in_use_bytes, 30 * kMiB);
  EXPECT_EQ(stats.requested_bytes, 30 * kMiB - 100);
  EXPECT_EQ(stats.peak_in_use_bytes, 30 * kMiB);
  EXPECT_EQ(stats.reserved_bytes, 30 * kMiB);
  EXPECT_EQ(stats.segments, 2u);
  a->deallocate(q);
  stats = a->stats();
  EXPECT_EQ(stats.in_use_bytes, 10 * kMiB);
  EXPECT_EQ(stats.peak_in_use_bytes, 30 * kMiB);
  a->reset_peak_stats();
  stats = a->stats();
  EXPECT_EQ(stats.peak_in_use_bytes, 10 * kMiB);
  EXPECT_EQ(stats.peak_reserved_bytes, 30 * kMiB);  // still held
  void* r = a->allocate(5 * kMiB, kStream);  // cut from the cached 20 MiB
  stats = a->stats();
  EXPECT_EQ(stats.peak_in_use_bytes, 15 * kMiB);
  EXPECT_EQ(stats.allocations, 3u);
  EXPECT_EQ(stats.cache_hits, 1u);
  EXPECT_EQ(stats.raw_allocations, 2u);
  a->deallocate(p);
  a->deallocate(r);
  a->empty_cache();
  a->reset_peak_stats();
  stats = a->stats();
  EXPECT_EQ(stats.peak_in_use_bytes, 0u);
  EXPECT_EQ(stats.peak_reserved_bytes, 0u);
}

TEST(DeviceCachingAllocator, EmptyCacheReturnsOnlyUnusedSegments) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device);
  void* small = a->allocate(100, kStream);        // in a 2 MiB small segment
  a->deallocate(a->allocate(30 * kMiB, kStream));
  void* part = a->allocate(10 * kMiB, kStream);   // cut from the cached 30 MiB segment
  a->deallocate(a->allocate(8 * kMiB, 2));        // a whole unused segment, of stream 2
  EXPECT_EQ(a->stats().segments, 3u);
  a->empty_cache();
  AllocatorStats stats = a->stats();
  // Only the 8 MiB segment went back: the others still hold a block in use.
  EXPECT_EQ(stats.raw_frees, 1u);
  EXPECT_EQ(stats.segments, 2u);
  EXPECT_EQ(stats.reserved_bytes, 2 * kMiB + 30 * kMiB);
  EXPECT_EQ(device.used, stats.reserved_bytes);
  EXPECT_EQ(a->allocated_size(small), 512u);
  EXPECT_EQ(a->allocated_size(part), 10 * kMiB);
  a->deallocate(small);
  a->deallocate(part);
  a->empty_cache();
  stats = a->stats();
  EXPECT_EQ(stats.reserved_bytes, 0u);
  EXPECT_EQ(stats.segments, 0u);
  EXPECT_EQ(device.used, 0u);
  EXPECT_EQ(stats.raw_frees, stats.raw_allocations);
  EXPECT_EQ(device.bad_frees, 0u);
}

TEST(DeviceCachingAllocator, ZeroByteRequestsGetDistinctBlocks) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device);
  void* p = a->allocate(0, kStream);
  void* q = a->allocate(0, kStream);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(p, q);
  EXPECT_EQ(a->allocated_size(p), CachingAllocator::kMinBlockSize);
  EXPECT_EQ(a->stats().in_use_bytes, 2 * CachingAllocator::kMinBlockSize);
  EXPECT_EQ(a->stats().requested_bytes, 0u);
  a->deallocate(p);
  a->deallocate(q);
  a->deallocate(nullptr);  // nothing
  EXPECT_EQ(a->stats().in_use_bytes, 0u);
}

TEST(DeviceCachingAllocator, HugeRequestsThrowAndLeaveItUsable) {
  FakeDevice device(64 * kMiB);
  auto a = make_allocator(device);
  expect_contains(out_of_memory_message([&] {
                    a->allocate(std::numeric_limits<size_t>::max(), kStream);
                  }),
                  "tried to allocate 16.00 EiB");
  expect_contains(out_of_memory_message([&] { a->allocate(128 * kMiB, kStream); }),
                  "tried to allocate 128.00 MiB");
  EXPECT_EQ(a->stats().out_of_memory_errors, 2u);
  void* p = a->allocate(32 * kMiB, kStream);
  EXPECT_NE(p, nullptr);
  a->deallocate(p);
}

TEST(DeviceCachingAllocator, RawMemoryErrorsPropagate) {
  FakeDevice device(64 * kMiB);
  auto a = make_allocator(device);
  device.throw_next = true;
  EXPECT_THROW(a->allocate(4 * kMiB, kStream), DeviceError);
  const AllocatorStats stats = a->stats();
  EXPECT_EQ(stats.reserved_bytes, 0u);
  EXPECT_EQ(stats.in_use_bytes, 0u);
  void* p = a->allocate(4 * kMiB, kStream);
  EXPECT_EQ(a->stats().in_use_bytes, 4 * kMiB);
  a->deallocate(p);
}

TEST(DeviceCachingAllocator, FreeingAnUnknownPointerIsABug) {
  FakeDevice device(64 * kMiB);
  auto a = make_allocator(device);
  void* p = a->allocate(100, kStream);
  int not_a_block = 0;
  EXPECT_THROW(a->deallocate(&not_a_block), InternalError);
  a->deallocate(p);
  EXPECT_THROW(a->deallocate(p), InternalError);  // twice
}

TEST(DeviceCachingAllocator, DestructorReturnsEverySegment) {
  FakeDevice device(1024 * kMiB);
  {
    auto a = make_allocator(device);
    a->allocate(100, kStream);  // still in use: the device gets it back all the same
    a->deallocate(a->allocate(50 * kMiB, kStream));
    EXPECT_EQ(device.segments.size(), 2u);
  }
  EXPECT_EQ(device.used, 0u);
  EXPECT_TRUE(device.segments.empty());
  EXPECT_EQ(device.bad_frees, 0u);
}

// Random requests and frees on three streams, checked after every step against a model: live
// blocks never overlap and lie inside the device's segments, and the figures add up exactly.
TEST(DeviceCachingAllocator, RandomRequestsKeepTheInvariants) {
  FakeDevice device(512 * kMiB);
  auto a = make_allocator(device);
  struct Live {
    size_t requested, size;
  };
  std::map<uintptr_t, Live> live;
  size_t in_use = 0, requested = 0, out_of_memory = 0;
  std::mt19937_64 rng(20240611);
  for (int step = 0; step < 4000; ++step) {
    if (live.empty() || rng() % 100 < 55) {
      size_t n = 0;
      const uint64_t kind = rng() % 10;
      if (kind < 4) {
        n = rng() % (kMiB + 1);
      } else if (kind < 9) {
        n = kMiB + rng() % (15 * kMiB);
      } else {
        n = 16 * kMiB + rng() % (80 * kMiB);
      }
      void* p = nullptr;
      try {
        p = a->allocate(n, 1 + rng() % 3);
      } catch (const ResourceExhaustedError&) {
        ++out_of_memory;
        continue;
      }
      const uintptr_t at = addr(p);
      const size_t size = a->allocated_size(p);
      ASSERT_GE(size, CachingAllocator::round_size(n));
      ASSERT_EQ(live.count(at), 0u);
      auto next = live.lower_bound(at);
      if (next != live.end()) ASSERT_LE(at + size, next->first) << "overlaps the next block";
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second.size, at) << "overlaps the previous block";
      }
      auto segment = device.segments.upper_bound(at);
      ASSERT_NE(segment, device.segments.begin());
      --segment;
      ASSERT_LE(at + size, segment->first + segment->second) << "outside its segment";
      live[at] = {n, size};
      in_use += size;
      requested += n;
    } else {
      auto it = live.begin();
      std::advance(it, long(rng() % live.size()));
      a->deallocate(reinterpret_cast<void*>(it->first));
      in_use -= it->second.size;
      requested -= it->second.requested;
      live.erase(it);
    }
    if (step % 500 == 499) a->empty_cache();
    const AllocatorStats stats = a->stats();
    ASSERT_EQ(stats.in_use_bytes, in_use);
    ASSERT_EQ(stats.requested_bytes, requested);
    ASSERT_EQ(stats.reserved_bytes, device.used);
    ASSERT_EQ(stats.segments, device.segments.size());
    ASSERT_EQ(stats.raw_allocations - stats.raw_frees, stats.segments);
    ASSERT_LE(stats.in_use_bytes, stats.reserved_bytes);
    ASSERT_EQ(stats.out_of_memory_errors, out_of_memory);
  }
  EXPECT_GT(out_of_memory, 0u);  // the device filled up, so the retry path ran too
  EXPECT_GT(a->stats().cache_hits, 1000u);
  for (const auto& [at, block] : live) a->deallocate(reinterpret_cast<void*>(at));
  EXPECT_EQ(a->stats().in_use_bytes, 0u);
  a->empty_cache();
  EXPECT_EQ(a->stats().reserved_bytes, 0u);
  EXPECT_EQ(device.used, 0u);
  EXPECT_EQ(device.bad_frees, 0u);
}

TEST(DeviceCachingAllocator, ThreadsShareOneAllocator) {
  FakeDevice device(1024 * kMiB);
  auto a = make_allocator(device);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<void*> mine;
      for (int i = 0; i < 2000; ++i) {
        if (mine.size() < 8 && rng() % 2 == 0) {
          void* p = a->allocate(rng() % (4 * kMiB), CachingAllocator::StreamId(1 + t % 2));
          if (p == nullptr) ++failures;
          mine.push_back(p);
        } else if (!mine.empty()) {
          a->deallocate(mine.back());
          mine.pop_back();
        }
      }
      for (void* p : mine) a->deallocate(p);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(a->stats().in_use_bytes, 0u);
  EXPECT_EQ(a->stats().requested_bytes, 0u);
  a->empty_cache();
  EXPECT_EQ(device.used, 0u);
}

TEST(FormatBytes, UsesBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 bytes");
  EXPECT_EQ(format_bytes(1), "1 byte");
  EXPECT_EQ(format_bytes(1023), "1023 bytes");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(3 * kMiB / 2), "1.50 MiB");
  EXPECT_EQ(format_bytes((size_t(3) << 30) / 2), "1.50 GiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<size_t>::max()), "16.00 EiB");
}

}  // namespace
}  // namespace strata
