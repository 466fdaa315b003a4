// GlooCommunicator: every collective's values on 2, 3 and 4 ranks (threads of this process,
// meeting through an InMemoryStore; Gloo connects them over loopback TCP), bit-identical across
// ranks, FIFO ordering of async ops, and the failures: a rank that never shows up (rendezvous
// and collective), abort(), a spent communicator, and a real second process killed mid-op.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>
#include <utility>
#include <vector>

#include <strata/strata.h>

#include "distribute/cluster/coordination/folder_store.h"
#include "distribute/cluster/coordination/in_memory_store.h"
#include "distribute/collectives/gloo/gloo_communicator.h"
#include "tests/distribute/coordination_test_util.h"
#include "tests/distribute/gloo_test_util.h"
#include "tests/framework/saving/child_process_util.h"


namespace strata::distribute {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using testing::coordination_error_of;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU tensors whatever the default device.
Tensor filled(const Shape& shape, double value, DType dtype = DType::kFloat32) {
  return full(shape, value, dtype, Device::cpu());
}

// The collectives' timeout in on_gloo_ranks unless a test sets another.
constexpr milliseconds kRanksTimeout{20000};

GlooOptions options_with_timeout(milliseconds timeout) {
  GlooOptions o;
  o.timeout = timeout;
  return o;
}

// Makes `world` communicators over one store (each on its own thread: the rendezvous needs them
// all at once) and runs body(rank, communicator) on those threads; rethrows the first error.
void on_gloo_ranks(int world, const std::function<void(int, GlooCommunicator&)>& body,
                   GlooOptions options = options_with_timeout(kRanksTimeout)) {
  InMemoryStore store;
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        GlooCommunicator comm(store, r, world, options);
        body(r, comm);
      } catch (...) {
        errors[size_t(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// Rank r's values: small integers and halves, so every order of summation gives the same exact
// result and a plain reference computation can be compared with ==.
template <typename T>
std::vector<T> exact_input(int rank, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = (i * 7 + rank * 13) % 23 - 11;
    v[size_t(i)] = std::is_floating_point_v<T> ? T(double(k) / 2) : T(k);
  }
  return v;
}

template <typename T>
std::vector<T> reference(int world, int64_t n, ReduceOp op) {
  std::vector<T> acc = exact_input<T>(0, n);
  for (int r = 1; r < world; ++r) {
    const std::vector<T> x = exact_input<T>(r, n);
    for (size_t i = 0; i < acc.size(); ++i) {
      if (op == ReduceOp::kMax) acc[i] = std::max(acc[i], x[i]);
      else if (op == ReduceOp::kMin) acc[i] = std::min(acc[i], x[i]);
      else acc[i] += x[i];
    }
  }
  if (op == ReduceOp::kMean) for (T& a : acc) a = T(a / T(world));
  return acc;
}

template <typename T>
void check_all_reduce_exact(int r, int world, GlooCommunicator& c, int64_t n) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kMin}) {
    Tensor t = Tensor::from_vector(exact_input<T>(r, n), Shape{n});
    c.all_reduce(t, op);
    EXPECT_EQ(t.to_vector<T>(), reference<T>(world, n, op))
        << "rank " << r << " of " << world << ", " << dtype_name(t.dtype()) << ", op "
        << int(op) << ", " << n << " elements";
  }
}

TEST(GlooCommunicator, AllReduceEachOpAndDtypeMatchesTheReference) {
  // 1 element and a few go through BCUBE (up to GlooOptions::bcube_max_bytes, 1 MiB), more
  // than one 1 MB ring segment per rank (float32: 1.2 MB) through the ring; then every size
  // through BCUBE, on world sizes that are not powers of two too.
  GlooOptions bcube_always = options_with_timeout(kRanksTimeout);
  bcube_always.bcube_max_bytes = SIZE_MAX;
  for (const auto& [world, options] :
       std::vector<std::pair<int, GlooOptions>>{{2, options_with_timeout(kRanksTimeout)},
                                                {3, options_with_timeout(kRanksTimeout)},
                                                {4, options_with_timeout(kRanksTimeout)},
                                                {5, options_with_timeout(kRanksTimeout)},
                                                {3, bcube_always},
                                                {6, bcube_always}}) {
    on_gloo_ranks(world, [&, world = world](int r, GlooCommunicator& c) {
      EXPECT_EQ(c.rank(), r);
      EXPECT_EQ(c.world_size(), world);
      for (int64_t n : {1, 37, 300001}) {
        check_all_reduce_exact<float>(r, world, c, n);
        check_all_reduce_exact<double>(r, world, c, n);
        check_all_reduce_exact<int32_t>(r, world, c, n);
        check_all_reduce_exact<int64_t>(r, world, c, n);
      }
    }, options);
  }
}

TEST(GlooCommunicator, AllReduceBitIdenticalOnEveryRank) {
  // Values whose float32 sum depends on the order: every rank must still get the same bits,
  // through the ring (this size) and through BCUBE (the 5 elements below).
  constexpr int64_t n = 100003;
  for (int world : {2, 3, 4, 5}) {
    std::vector<std::vector<float>> small(static_cast<size_t>(world));
    on_gloo_ranks(world, [&](int r, GlooCommunicator& c) {
      std::vector<float> v(5);
      for (int64_t i = 0; i < 5; ++i) v[size_t(i)] = 1e8f * float((i + r) % 3) + 0.1f * float(r + i);
      Tensor t = Tensor::from_vector(v, Shape{5});
      c.all_reduce(t, ReduceOp::kSum);
      small[size_t(r)] = t.to_vector<float>();
    });
    for (int r = 1; r < world; ++r) EXPECT_EQ(small[size_t(r)], small[0]) << "BCUBE, rank " << r;
  }
  for (int world : {2, 3, 4}) {
    std::vector<std::vector<float>> got(static_cast<size_t>(world));
    std::vector<std::vector<uint16_t>> got_half(static_cast<size_t>(world)), got_bf16(static_cast<size_t>(world));
    on_gloo_ranks(world, [&](int r, GlooCommunicator& c) {
      std::vector<float> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) v[size_t(i)] = 1e8f * float((i + r) % 3) + 0.1f * float(r + i % 7);
      Tensor t = Tensor::from_vector(v, Shape{n});
      c.all_reduce(t, ReduceOp::kMean);
      got[size_t(r)] = t.to_vector<float>();
      // 16-bit floats: computed in float, rounded per step (as PyTorch's Gloo backend does).
      Tensor h = Tensor::from_vector(v, Shape{n}).cast(DType::kFloat16);
      Tensor b = Tensor::from_vector(v, Shape{n}).cast(DType::kBFloat16);
      c.all_reduce(h, ReduceOp::kSum);
      c.all_reduce(b, ReduceOp::kSum);
      got_half[size_t(r)].resize(size_t(n));
      got_bf16[size_t(r)].resize(size_t(n));
      std::memcpy(got_half[size_t(r)].data(), h.raw_data(), h.nbytes());
      std::memcpy(got_bf16[size_t(r)].data(), b.raw_data(), b.nbytes());
    });
    for (int r = 1; r < world; ++r) {
      EXPECT_EQ(got[size_t(r)], got[0]) << "rank " << r << " of " << world;
      EXPECT_EQ(got_half[size_t(r)], got_half[0]) << "float16, rank " << r << " of " << world;
      EXPECT_EQ(got_bf16[size_t(r)], got_bf16[0]) << "bfloat16, rank " << r << " of " << world;
    }
  }
}

TEST(GlooCommunicator, AsyncBucketsRunInIssueOrder) {
  // Buckets of different sizes issued back to back (as the gradient reducer does during the
  // backward pass), a sync op between them, then all waited for: each gets its own sum.
  constexpr int kBuckets = 8;
  on_gloo_ranks(3, [&](int r, GlooCommunicator& c) {
    std::vector<Tensor> buckets;
    std::vector<std::shared_ptr<Work>> works;
    for (int b = 0; b < kBuckets; ++b) {
      const int64_t n = int64_t(1) << (2 * b);  // 1 .. 16384 elements
      buckets.push_back(filled(Shape{n}, float(b * 10 + r)));
      works.push_back(c.all_reduce_async(buckets.back(), ReduceOp::kSum));
      if (b == 3) {
        Tensor x = filled(Shape{4}, r, DType::kInt64);
        c.all_reduce(x, ReduceOp::kMax);  // waits for buckets 0..3 first (FIFO)
        EXPECT_EQ(x.to_vector<int64_t>(), (std::vector<int64_t>(4, 2)));
        for (int d = 0; d <= 3; ++d) EXPECT_TRUE(works[size_t(d)]->done()) << "bucket " << d;
      }
    }
    for (int b = 0; b < kBuckets; ++b) {
      works[size_t(b)]->wait();
      const float expected = float(3 * b * 10 + 0 + 1 + 2);
      const std::vector<float> v = buckets[size_t(b)].to_vector<float>();
      EXPECT_EQ(v.front(), expected) << "bucket " << b;
      EXPECT_EQ(v.back(), expected) << "bucket " << b;
    }
    EXPECT_EQ(c.ops_issued(), uint64_t(kBuckets + 1));
  });
}

TEST(GlooCommunicator, BroadcastFromEachRoot) {
  on_gloo_ranks(3, [&](int r, GlooCommunicator& c) {
    for (int root = 0; root < 3; ++root) {
      Tensor t = Tensor::from_vector(std::vector<double>{double(r), 10.0 * r, -1.5}, Shape{3});
      c.broadcast(t, root);
      EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{double(root), 10.0 * root, -1.5}))
          << "rank " << r << ", root " << root;
    }
    Tensor t = filled(Shape{2}, 1.f);
    EXPECT_THROW(c.broadcast(t, 3), ValueError);
  });
}

TEST(GlooCommunicator, AllGatherInRankOrder) {
  on_gloo_ranks(3, [&](int r, GlooCommunicator& c) {
    Tensor t = Tensor::from_vector(std::vector<int32_t>{r, r + 10, r + 20, r + 30}, Shape{2, 2});
    Tensor g = c.all_gather(t);
    EXPECT_EQ(g.shape(), (Shape{6, 2}));
    EXPECT_EQ(g.to_vector<int32_t>(),
              (std::vector<int32_t>{0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32}));
    EXPECT_THROW(c.all_gather(Tensor::scalar(1.f)), ShapeError);
  });
}

TEST(GlooCommunicator, ReduceScatterGivesEachRankItsPart) {
  on_gloo_ranks(4, [&](int r, GlooCommunicator& c) {
    std::vector<float> v(8 * 3);
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) + float(r);
    Tensor part = c.reduce_scatter(Tensor::from_vector(v, Shape{8, 3}), ReduceOp::kSum);
    EXPECT_EQ(part.shape(), (Shape{2, 3}));
    std::vector<float> expected;
    for (size_t i = size_t(r) * 6; i < size_t(r + 1) * 6; ++i) expected.push_back(4 * float(i) + 6);
    EXPECT_EQ(part.to_vector<float>(), expected) << "rank " << r;
    EXPECT_THROW(c.reduce_scatter(filled(Shape{6}, 1.f), ReduceOp::kSum), ShapeError);
  });
}

// No rank leaves the barrier before the last one (late by 300 ms) entered it: an order of
// events, so a busy machine cannot make it fail.
TEST(GlooCommunicator, BarrierWaitsForTheLastRank) {
  std::vector<Clock::time_point> entered(3), left(3);
  on_gloo_ranks(3, [&](int r, GlooCommunicator& c) {
    if (r == 2) std::this_thread::sleep_for(milliseconds(300));
    entered[size_t(r)] = Clock::now();
    c.barrier();
    left[size_t(r)] = Clock::now();
  });
  EXPECT_GE(left[0], entered[2]);
  EXPECT_GE(left[1], entered[2]);
}

TEST(GlooCommunicator, RejectsWhatItCannotReduce) {
  on_gloo_ranks(1, [&](int, GlooCommunicator& c) {
    Tensor b = filled(Shape{2}, 1.f).cast(DType::kBool);
    EXPECT_THROW(c.all_reduce(b, ReduceOp::kSum), ValueError);
    Tensor f = filled(Shape{2}, 3.f);
    EXPECT_THROW(c.all_reduce(f, ReduceOp::kProd), ValueError);
    Tensor undefined;
    EXPECT_THROW(c.all_reduce(undefined, ReduceOp::kSum), ValueError);
    c.all_reduce(f, ReduceOp::kMean);  // one rank: itself
    EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{3.f, 3.f}));
    c.barrier();
  });
}

// An InMemoryStore that counts what is read from it, key by key.
class CountingStore final : public KeyValueStore {
 public:
  void set(const std::string& key, const std::string& value) override { inner_.set(key, value); }
  std::string get(const std::string& key, milliseconds timeout) override {
    std::string value = inner_.get(key, timeout);
    record(key, value);
    return value;
  }
  std::optional<std::string> try_get(const std::string& key) override {
    std::optional<std::string> value = inner_.try_get(key);
    if (value) record(key, *value);
    return value;
  }
  int64_t add(const std::string& key, int64_t delta) override { return inner_.add(key, delta); }
  void erase(const std::string& key) override { inner_.erase(key); }

  std::map<std::string, int> reads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return reads_;
  }
  int64_t bytes_read() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }

 private:
  void record(const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++reads_[key];
    bytes_ += int64_t(key.size() + value.size());
  }
  InMemoryStore inner_;
  mutable std::mutex mutex_;
  std::map<std::string, int> reads_;
  int64_t bytes_ = 0;
};

TEST(GlooCommunicator, RendezvousReadsEachPeerAddressOnceSoTheStoreMovesQuadraticBytes) {
  // Each rank reads the N-1 addresses meant for it, each once: N(N-1) reads of one address in
  // all (Gloo's connectFullMesh read N-1 addresses per key, each key twice, N(N-1) times: 2(N-1)
  // times the bytes, 14x at N = 8, 254x at 128). Then the ranks work together.
  const int world = 8;
  CountingStore store;
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(world));
  std::vector<std::vector<float>> sums(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        GlooCommunicator comm(store, r, world, options_with_timeout(kRanksTimeout));
        Tensor t = Tensor::from_vector(std::vector<float>{float(r)}, Shape{1});
        comm.all_reduce(t, ReduceOp::kSum);
        sums[size_t(r)] = t.to_vector<float>();
      } catch (...) {
        errors[size_t(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  for (int r = 0; r < world; ++r) EXPECT_EQ(sums[size_t(r)], std::vector<float>{28.f});
  int64_t address_reads = 0;
  size_t longest = 0;
  for (const auto& [key, count] : store.reads()) {
    if (key.find("/pair/") == std::string::npos) continue;
    EXPECT_EQ(count, 1) << key << " was read " << count << " times";
    address_reads += count;
    longest = std::max(longest, store.try_get(key).value_or("").size());
  }
  EXPECT_EQ(address_reads, int64_t(world) * (world - 1));
  // One hex-encoded address a key (a sockaddr_storage and a sequence number), never a list.
  EXPECT_LE(longest, 2 * (sizeof(sockaddr_storage) + 16));
}

TEST(GlooCommunicator, RendezvousTimeoutNamesTheMissingRank) {
  GlooOptions options = options_with_timeout(milliseconds(1000));
  options.rank_name = [](int r) {
    return "worker " + std::to_string(r) + " (localhost:2000" + std::to_string(r) + ")";
  };
  InMemoryStore store;
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int r = 0; r < 2; ++r) {  // rank 2 of 3 never comes
    threads.emplace_back([&, r] {
      try {
        GlooCommunicator comm(store, r, 3, options);
      } catch (const CoordinationError& e) {
        errors[size_t(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  // Not a speed check: the 1 s rendezvous timeout ended the wait, not the test's own (ctest's).
  EXPECT_LT(seconds_since(start), 10.0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[size_t(r)].find("worker 2 (localhost:20002) did not show up"),
              std::string::npos) << errors[size_t(r)];
    EXPECT_NE(errors[size_t(r)].find("within 1 s"), std::string::npos) << errors[size_t(r)];
  }
}

// GlooOptions::abandon: an elastic group's generation that a newer one replaced is given up
// at once, wherever its rendezvous waits, with the reason (not after the timeout).
std::function<std::string()> abandon_after(milliseconds delay) {
  const auto at = Clock::now() + delay;
  return [at]() -> std::string {
    return Clock::now() < at ? "" : "generation 3 replaced generation 2 before it formed";
  };
}

// Rank 0 of 2 meeting through `store` with a 60 s timeout and abandon_after(delay): the
// rendezvous error's message ("" and a test failure if it formed).
std::string abandoned_rendezvous(InMemoryStore& store, milliseconds delay) {
  GlooOptions options = options_with_timeout(milliseconds(60000));
  options.abandon = abandon_after(delay);
  return coordination_error_of([&] { GlooCommunicator comm(store, 0, 2, options); });
}

TEST(GlooCommunicator, AbandonEndsTheWaitForAPeerThatNeverPublishes) {
  InMemoryStore store;   // rank 1 never comes
  const std::string what = abandoned_rendezvous(store, milliseconds(500));
  EXPECT_NE(what.find("generation 3 replaced generation 2"), std::string::npos) << what;
}

TEST(GlooCommunicator, AbandonEndsTheConnectWaitForAPeerThatPublishedAndVanished) {
  // Rank 1 published its end of the pair and died before dialing: rank 0's end listens for it.
  // Gloo waits 5x the timeout there (5 minutes here); abandon must end it with its reason.
  InMemoryStore store;
  testing::publish_ends_that_never_dial(store, "gloo", 1, {0});
  const std::string what = abandoned_rendezvous(store, milliseconds(1000));
  EXPECT_NE(what.find("generation 3 replaced generation 2"), std::string::npos) << what;
  EXPECT_EQ(what.find("Connect timeout"), std::string::npos) << what;
}

// Gloo's own lookup crashes on a name that does not resolve; Strata checks first.
TEST(GlooCommunicator, AHostnameThatDoesNotResolveIsAnErrorNamingIt) {
  GlooOptions options = options_with_timeout(milliseconds(1000));
  options.hostname = "no-such-host.invalid";
  InMemoryStore store;
  try {
    GlooCommunicator comm(store, 0, 2, options);
    FAIL() << "expected a CoordinationError";
  } catch (const CoordinationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'no-such-host.invalid' does not resolve"), std::string::npos) << what;
    EXPECT_NE(what.find("/etc/hosts"), std::string::npos) << what;
  }
}

TEST(GlooCommunicator, CollectiveTimeoutNamesTheRankThatNeverJoinsThenStaysSpent) {
  GlooOptions options = options_with_timeout(milliseconds(1000));
  options.diagnose = [] { return std::string("worker 2 sent no heartbeat for 1 s"); };
  std::vector<std::string> errors(3);
  std::atomic<int> finished{0};
  on_gloo_ranks(3, [&](int r, GlooCommunicator& c) {
    if (r == 2) {  // alive and connected, but never calls the collective
      while (finished.load() < 2) std::this_thread::sleep_for(milliseconds(10));
      return;
    }
    Tensor t = filled(Shape{1024}, 1.f);
    const auto start = Clock::now();
    try {
      c.all_reduce(t, ReduceOp::kSum);
      ADD_FAILURE() << "rank " << r << ": the all-reduce completed without rank 2";
    } catch (const CoordinationError& e) {
      errors[size_t(r)] = e.what();
    }
    // Not a speed check: the 1 s timeout (with room for a busy CPU) ended it, not a hang.
    EXPECT_LT(seconds_since(start), 6.0) << "rank " << r;
    // Spent: every later op throws the first error at once.
    try {
      c.barrier();
      ADD_FAILURE() << "a spent communicator ran a barrier";
    } catch (const CoordinationError& e) {
      EXPECT_EQ(std::string(e.what()), errors[size_t(r)]);
    }
    // The first error again, not one of its own: an op that really ran would time out after
    // 1 s with a message naming it (all_reduce #2). Not a speed check, so no clock: under a
    // busy CPU "at once" may take a second too.
    try {
      c.all_reduce_async(t, ReduceOp::kSum)->wait();
      ADD_FAILURE() << "a spent communicator ran an all-reduce";
    } catch (const CoordinationError& e) {
      EXPECT_EQ(std::string(e.what()), errors[size_t(r)]);
    }
    ++finished;
  }, options);
  for (int r = 0; r < 2; ++r) {
    const std::string& e = errors[size_t(r)];
    EXPECT_NE(e.find("all_reduce #1 (4096 bytes)"), std::string::npos) << e;
    EXPECT_NE(e.find("not reached by rank 2 (no sign"), std::string::npos) << e;
    EXPECT_EQ(e.find("rank 1 ("), std::string::npos) << e;  // present ranks are not blamed
    EXPECT_NE(e.find("worker 2 sent no heartbeat"), std::string::npos) << e;
  }
  // At least the first rank to give up says it timed out (the other may see its peer close).
  EXPECT_TRUE(errors[0].find("did not complete within 1 s") != std::string::npos ||
              errors[1].find("did not complete within 1 s") != std::string::npos)
      << errors[0] << "\n" << errors[1];
}

TEST(GlooCommunicator, AbortUnblocksAPendingOpAtOnce) {
  // What ended each wait is told by its message, not a clock: abort()'s reason, or a closed
  // connection, never "did not complete within" (the 30 s timeout's).
  std::atomic<bool> rank0_done{false};
  on_gloo_ranks(2, [&](int r, GlooCommunicator& c) {
    if (r == 1) {
      // Never joins rank 0's all-reduce; once rank 0 aborted, its connection is closed, so
      // this rank's next op fails at once too instead of waiting out kRanksTimeout.
      while (!rank0_done.load()) std::this_thread::sleep_for(milliseconds(10));
      try {
        c.barrier();
        ADD_FAILURE() << "rank 1's barrier completed without rank 0";
      } catch (const CoordinationError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("barrier #1 (0 bytes) failed"), std::string::npos) << what;
        EXPECT_TRUE(std::regex_search(what, std::regex(R"(\]:\d+ \(rank 0\))"))) << what;
        EXPECT_NE(what.find("rank 0 aborted its communicator: worker 1 was lost"), std::string::npos) << what;
        EXPECT_EQ(what.find("did not complete within"), std::string::npos) << what;
      }
      return;
    }
    Tensor t = filled(Shape{1 << 20}, 1.f);
    auto work = c.all_reduce_async(t, ReduceOp::kSum);
    auto queued = c.all_reduce_async(t, ReduceOp::kSum);
    std::this_thread::sleep_for(milliseconds(300));
    EXPECT_FALSE(work->done());
    std::thread([&] { c.abort("worker 1 was lost (heartbeat timeout)"); }).join();
    try {
      work->wait();
      ADD_FAILURE() << "the pending all-reduce completed";
    } catch (const CoordinationError& e) {
      EXPECT_NE(std::string(e.what()).find("all_reduce #1 (4194304 bytes) was aborted: worker 1 "
                                           "was lost (heartbeat timeout)"),
                std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("did not complete within"), std::string::npos);
    }
    try {
      queued->wait();
      ADD_FAILURE() << "the queued all-reduce ran after abort()";
    } catch (const CoordinationError& e) {
      EXPECT_NE(std::string(e.what()).find("worker 1 was lost"), std::string::npos) << e.what();
    }
    EXPECT_THROW(c.barrier(), CoordinationError);
    rank0_done = true;
  }, options_with_timeout(milliseconds(30000)));
}

// --- Real processes -------------------------------------------------------------------------

constexpr const char* kChildEnv = "STRATA_GLOO_TEST_CHILD_DIR";

// The child process's part (rank 1 of 2): one all-reduce, its result reported in a file, then
// it waits to be killed. Skipped in a normal run.
TEST(GlooCommunicatorProcess, Child) {
  const char* dir = std::getenv(kChildEnv);
  if (dir == nullptr) GTEST_SKIP() << "runs as the child of GlooCommunicatorProcess tests";
  FolderStore store(dir);
  GlooCommunicator comm(store, 1, 2, options_with_timeout(milliseconds(30000)));
  Tensor t = filled(Shape{1 << 18}, 2.f);
  comm.all_reduce(t, ReduceOp::kSum);
  const std::vector<float> v = t.to_vector<float>();
  store.set("child_result", v.front() == 3.f && v.back() == 3.f ? "ok" : "wrong values");
  for (;;) pause();  // the parent's next op waits on this rank until the parent kills it
}

TEST(GlooCommunicatorProcess, CrossProcessAllReduceAndAKilledPeer) {
  if (std::getenv(kChildEnv) != nullptr) GTEST_SKIP();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("strata_gloo_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // A fresh process (posix_spawn of this binary), not a fork of this multi-threaded one.
  const std::string log = (dir / "child.log").string();
  const pid_t child = testing::spawn_test_in_child(
      "GlooCommunicatorProcess.Child", {std::string(kChildEnv) + "=" + dir.string()}, log);
  ASSERT_GT(child, 0);
  struct Reaper {  // the child never outlives the test
    pid_t pid;
    ~Reaper() {
      ::kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{child};

  FolderStore store(dir);
  const milliseconds timeout(30000);
  GlooOptions options = options_with_timeout(timeout);
  options.rank_name = [](int r) { return "worker " + std::to_string(r); };
  GlooCommunicator comm(store, 0, 2, options);
  Tensor t = filled(Shape{1 << 18}, 1.f);
  comm.all_reduce(t, ReduceOp::kSum);
  EXPECT_EQ(t.to_vector<float>().back(), 3.f);
  EXPECT_EQ(store.get("child_result", milliseconds(20000)), "ok");

  // The child is in pause(): this op waits on it until it dies, then fails at once (its
  // sockets close with it), long before the 30 s timeout.
  auto work = comm.all_reduce_async(t, ReduceOp::kSum);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE(work->done());
  ::kill(child, SIGKILL);
  try {
    work->wait();
    ADD_FAILURE() << "the all-reduce completed without its peer";
  } catch (const CoordinationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("all_reduce #2 (1048576 bytes) failed"), std::string::npos) << what;
    // Gloo names the peer's address; the error adds the rank behind it.
    EXPECT_TRUE(std::regex_search(what, std::regex(R"(\]:\d+ \(worker 1\))"))) << what;
    // Its peer's death ended it (a closed connection), not the 30 s timeout.
    EXPECT_EQ(what.find("did not complete within"), std::string::npos) << what;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strata::distribute
