// The cross-process NCCL group (MultiWorkerMirroredStrategy's on GPUs): the unique-id exchange
// through the store and the factory's errors run everywhere; the collectives need GPUs (two
// "workers" as threads of this process, one GPU each, meeting through an InMemoryStore) and skip
// with the reason elsewhere. Across real processes: test_multi_worker_mirrored.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <strata/strata.h>

#include "distribute/cluster/coordination/in_memory_store.h"
#include "distribute/collectives/nccl_support.h"
#include "distribute/multi_worker_mirrored_strategy.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::distribute {
namespace {

using namespace std::chrono_literals;

// Runs body(w) on one thread per worker; rethrows the first failure.
void on_workers(int workers, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      try {
        body(w);
      } catch (...) {
        errors[size_t(w)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// ---- the unique-id exchange (no NCCL needed) ----

TEST(CrossProcessNcclUniqueId, ChiefPublishesBinaryIdAndEveryWorkerReadsIt) {
  InMemoryStore store;
  // NCCL's id is 128 opaque bytes: zeros and high bytes must survive the store.
  std::string id(128, '\0');
  for (size_t i = 0; i < id.size(); ++i) id[i] = char((i * 37) & 0xff);
  std::atomic<int> made{0};
  std::vector<std::string> got(3);
  CrossProcessNcclOptions options;
  options.generation = 2;
  on_workers(3, [&](int w) {
    got[size_t(w)] = exchange_nccl_unique_id(
        store, w, 2,
        [&] {
          ++made;
          return id;
        },
        5s, options);
  });
  EXPECT_EQ(made.load(), 1);  // only worker 0 makes one
  for (const std::string& g : got) EXPECT_EQ(g, id);
  EXPECT_EQ(store.try_get(nccl_unique_id_key(2)).value_or(""), id);
  EXPECT_EQ(nccl_unique_id_key(2), "nccl/2/unique_id");
}

TEST(CrossProcessNcclUniqueId, TimeoutNamesTheChief) {
  InMemoryStore store;  // the chief never publishes
  CrossProcessNcclOptions options;
  options.generation = 3;
  options.worker_name = [](int w) {
    return w == 0 ? std::string("chief 0 (localhost:2222)") : "worker " + std::to_string(w);
  };
  const auto start = std::chrono::steady_clock::now();
  testing::expect_error<CoordinationError>(
      [&] {
        exchange_nccl_unique_id(store, 1, 1, [] { return std::string("never"); }, 200ms, options);
      },
      {"worker 1", "chief 0 (localhost:2222)", "nccl/3/unique_id", "200 ms", "timeout_seconds"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  // Without a name, worker 0.
  testing::expect_error<CoordinationError>(
      [&] { exchange_nccl_unique_id(store, 2, 1, [] { return std::string(); }, 50ms); },
      {"worker 0", "nccl/0/unique_id"});
}

TEST(CrossProcessNcclUniqueId, DifferentGpuCountsAreRefused) {
  InMemoryStore store;
  exchange_nccl_unique_id(store, 0, 2, [] { return std::string("id"); }, 1s);
  testing::expect_error<ValueError>(
      [&] { exchange_nccl_unique_id(store, 1, 1, [] { return std::string(); }, 1s); },
      {"worker 1 has 1 GPU", "worker 0 has 2", "same number of GPUs"});
}

// What a set-up that times out reports: the workers that never reached it, per generation.
TEST(CrossProcessNcclUniqueId, MissingWorkersAreNamed) {
  InMemoryStore store;
  CrossProcessNcclOptions options;
  options.generation = 4;
  auto id = [] { return std::string("id"); };
  EXPECT_EQ(nccl_workers_missing(store, 3, options), "worker 0, worker 1, worker 2");
  exchange_nccl_unique_id(store, 0, 1, id, 1s, options);
  exchange_nccl_unique_id(store, 2, 1, id, 1s, options);
  EXPECT_EQ(nccl_workers_missing(store, 3, options), "worker 1");
  exchange_nccl_unique_id(store, 1, 1, id, 1s, options);
  EXPECT_EQ(nccl_workers_missing(store, 3, options), "");
  CrossProcessNcclOptions next;  // a remade group starts over
  next.generation = 5;
  next.worker_name = [](int w) { return "task " + std::to_string(w); };
  EXPECT_EQ(nccl_workers_missing(store, 2, next), "task 0, task 1");
}

// ---- the factory's errors ----

TEST(CrossProcessNccl, FactoryRefusesWhatItCannotDo) {
  InMemoryStore store;
  if (!nccl_available()) {
    testing::expect_error<ValueError>(
        [&] { make_cross_process_nccl_group({Device::gpu(0)}, store, 0, 2, 1s); },
        {"cross-process NCCL", "no NCCL", "kRing"});
    return;
  }
  testing::expect_error<ValueError>(
      [&] { make_cross_process_nccl_group({Device::cpu(0)}, store, 0, 2, 1s); },
      {"cross-process NCCL", "/cpu:0", "is not a GPU", "kRing"});
  testing::expect_error<ValueError>(
      [&] { make_cross_process_nccl_group({}, store, 0, 2, 1s); }, {"no local GPUs"});
  testing::expect_error<ValueError>(
      [&] { make_cross_process_nccl_group({Device::gpu(0)}, store, 2, 2, 1s); },
      {"worker 2", "outside [0, 2)"});
}

TEST(MultiWorkerMirroredNccl, NcclOnCpuDevicesIsRefusedBeforeJoining) {
  config::set_logical_cpu_devices(2);
  ClusterSpec spec(std::map<std::string, std::vector<std::string>>{
      {"worker", {"localhost:1", "localhost:2"}}});
  auto resolver = std::make_shared<SimpleClusterResolver>(
      spec, SimpleClusterResolverOptions().task_type("worker").task_id(1));
  testing::expect_error<ValueError>(
      [&] {
        MultiWorkerMirroredStrategy s(
            resolver, CommunicationOptions().implementation(CommunicationImplementation::kNccl),
            {"/cpu:0", "/cpu:1"});
      },
      {"kNccl needs GPUs", "kRing"});
  config::set_logical_cpu_devices(1);
}

// ---- the collectives, on GPUs ----

#define REQUIRE_GPUS_AND_NCCL(n)                                                             \
  do {                                                                                       \
    if (gpu::device_count() < (n))                                                           \
      GTEST_SKIP() << "GPU test: needs " << (n) << " GPUs, found " << gpu::device_count();  \
    if (!nccl_available()) GTEST_SKIP() << "GPU test: built without NCCL";                   \
  } while (0)

Tensor on(std::vector<float> v, Device d) {
  const int64_t n = int64_t(v.size());
  return Tensor::from_vector(std::move(v), Shape{n}).to(d);
}

// Two workers (threads), one GPU each: one 2-rank NCCL communicator made through the store.
TEST(CrossProcessNccl, TwoWorkersOneGpuEachCollectives) {
  REQUIRE_GPUS_AND_NCCL(2);
  InMemoryStore store;
  std::vector<Tensor> sums(2), means(2), bcast(2), gathered(2), scattered(2);
  std::vector<int> ranks(2), worlds(2);
  on_workers(2, [&](int w) {
    const Device d = Device::gpu(w);
    auto group = make_cross_process_nccl_group({d}, store, w, 2, 60s);
    EXPECT_EQ(group->world_size(), 2);
    auto comm = group->communicator(0);
    ranks[size_t(w)] = comm->rank();
    worlds[size_t(w)] = comm->world_size();
    Tensor t = on({float(w), 1.f, -2.f}, d);
    comm->all_reduce(t, ReduceOp::kSum);
    sums[size_t(w)] = t.to(Device::cpu());
    Tensor m = on({float(w) * 4.f}, d);
    comm->all_reduce_async(m, ReduceOp::kMean)->wait();
    means[size_t(w)] = m.to(Device::cpu());
    Tensor b = on({float(w) + 10.f, float(w)}, d);
    comm->broadcast(b, 1);
    bcast[size_t(w)] = b.to(Device::cpu());
    gathered[size_t(w)] = comm->all_gather(on({float(w), float(w) + 0.5f}, d)).to(Device::cpu());
    scattered[size_t(w)] =
        comm->reduce_scatter(on({1.f, 2.f, 3.f, 4.f}, d), ReduceOp::kSum).to(Device::cpu());
    comm->barrier();
  });
  for (int w = 0; w < 2; ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_EQ(ranks[size_t(w)], w);
    EXPECT_EQ(worlds[size_t(w)], 2);
    EXPECT_EQ(sums[size_t(w)].to_vector<float>(), (std::vector<float>{1.f, 2.f, -4.f}));
    EXPECT_EQ(means[size_t(w)].to_vector<float>(), (std::vector<float>{2.f}));
    EXPECT_EQ(bcast[size_t(w)].to_vector<float>(), (std::vector<float>{11.f, 1.f}));
    EXPECT_EQ(gathered[size_t(w)].to_vector<float>(), (std::vector<float>{0.f, 0.5f, 1.f, 1.5f}));
    EXPECT_EQ(scattered[size_t(w)].to_vector<float>(),
              (w == 0 ? std::vector<float>{2.f, 4.f} : std::vector<float>{6.f, 8.f}));
  }
}

// Two workers with two GPUs each: global rank = worker * 2 + local GPU; NCCL combines a
// worker's GPUs and the workers in one operation.
TEST(CrossProcessNccl, TwoWorkersTwoGpusEachUseGlobalRanks) {
  REQUIRE_GPUS_AND_NCCL(4);
  InMemoryStore store;
  std::vector<Tensor> sums(4), gathered(4);
  std::vector<int> ranks(4);
  on_workers(2, [&](int w) {
    const std::vector<Device> mine = {Device::gpu(2 * w), Device::gpu(2 * w + 1)};
    auto group = make_cross_process_nccl_group(mine, store, w, 2, 60s);
    EXPECT_EQ(group->world_size(), 4);
    on_workers(2, [&](int l) {
      auto comm = group->communicator(l);
      const int g = comm->rank();
      ranks[size_t(2 * w + l)] = g;
      Tensor t = on({float(g), 1.f}, mine[size_t(l)]);
      comm->all_reduce(t, ReduceOp::kSum);
      sums[size_t(g)] = t.to(Device::cpu());
      gathered[size_t(g)] = comm->all_gather(on({float(g)}, mine[size_t(l)])).to(Device::cpu());
    });
  });
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(ranks[size_t(g)], g);
    EXPECT_EQ(sums[size_t(g)].to_vector<float>(), (std::vector<float>{6.f, 4.f}));
    EXPECT_EQ(gathered[size_t(g)].to_vector<float>(), (std::vector<float>{0.f, 1.f, 2.f, 3.f}));
  }
}

// A worker whose peer never joins gives up after the timeout (CoordinationError), and a lazily
// connecting group that is aborted fails its collectives with the reason.
TEST(CrossProcessNccl, MissingPeerTimesOutAndAbortEndsTheGroup) {
  REQUIRE_GPUS_AND_NCCL(1);
  InMemoryStore store;
  testing::expect_error<CoordinationError>(
      [&] { make_cross_process_nccl_group({Device::gpu(0)}, store, 0, 2, 2s); },
      {"not every worker", "2-rank", "2000 ms"});
  CrossProcessNcclOptions lazy;
  lazy.generation = 1;
  lazy.connect_now = false;
  auto group = make_cross_process_nccl_group({Device::gpu(0)}, store, 0, 2, 2s, lazy);
  group->abort("worker 1 failed");
  Tensor t = on({1.f}, Device::gpu(0));
  testing::expect_error<CollectiveError>(
      [&] { group->communicator(0)->all_reduce(t, ReduceOp::kSum); }, {"aborted", "worker 1 failed"});
}

}  // namespace
}  // namespace strata::distribute
