// HierarchicalGroup: the collectives of a worker's local replicas combined with other workers',
// here 2 workers x 2 local replicas inside one process (the workers' cross-worker communicator
// an in-process group of 2, as Gloo would be across processes). all_reduce_async returns before
// the other workers have joined (the backward pass goes on), and every collective keeps its
// issue order. Also OrderedOps, which gives it that order, and the exact rows carried in a sum
// (rows_in_a_sum.h: MultiWorkerMirroredStrategy's step state inside the last gradient bucket).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include <strata/strata.h>

#include "distribute/collectives/hierarchical_group.h"
#include "distribute/collectives/in_process_communicator.h"
#include "distribute/collectives/ordered_ops.h"
#include "distribute/collectives/rows_in_a_sum.h"

namespace strata::distribute {
namespace {

constexpr int kWorkers = 2, kLocal = 2;

// The 4 ranks' communicators: worker w's local replica l is global rank w * 2 + l.
struct TwoByTwo {
  InProcessGroup cross{kWorkers};
  std::vector<std::unique_ptr<HierarchicalGroup>> workers;
  TwoByTwo() {
    for (int w = 0; w < kWorkers; ++w) {
      workers.push_back(std::make_unique<HierarchicalGroup>(
          std::make_unique<InProcessGroup>(kLocal), cross.communicator(w),
          [this](const std::string& reason) { cross.abort(reason); }, /*on_host=*/true));
    }
  }
  // body(global rank, communicator) on 4 threads at once.
  void run(const std::function<void(int, Communicator&)>& body) {
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(kWorkers * kLocal);
    for (int w = 0; w < kWorkers; ++w) {
      for (int l = 0; l < kLocal; ++l) {
        threads.emplace_back([&, w, l] {
          try {
            body(w * kLocal + l, *workers[size_t(w)]->communicator(l));
          } catch (...) {
            errors[size_t(w * kLocal + l)] = std::current_exception();
          }
        });
      }
    }
    for (auto& t : threads) t.join();
    for (auto& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }
};

TEST(HierarchicalGroup, AsyncAllReduceReturnsBeforeTheOtherWorkerJoinsAndSumsEveryRank) {
  TwoByTwo group;
  std::atomic<bool> worker0_issued{false};
  std::atomic<int> worker0_calls{0}, pending_when_issued{0};
  group.run([&](int rank, Communicator& comm) {
    EXPECT_EQ(comm.rank(), rank);
    EXPECT_EQ(comm.world_size(), 4);
    const bool worker0 = rank < kLocal;
    if (!worker0) {
      // Worker 1 starts only once both of worker 0's replicas have their async calls back: a
      // call that waited for worker 1 would not return, and after 60 s worker 1 goes anyway
      // (the expectation below fails instead of the test hanging).
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!worker0_issued.load() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      EXPECT_TRUE(worker0_issued.load()) << "worker 0's all_reduce_async waited for worker 1";
    }
    Tensor a = Tensor::from_vector<float>({float(rank + 1), 10.0f * float(rank + 1)}, Shape{2});
    Tensor b = Tensor::from_vector<float>({100.0f * float(rank + 1)}, Shape{1});
    std::shared_ptr<CollectiveWork> wa = comm.all_reduce_async(a, ReduceOp::kSum);
    std::shared_ptr<CollectiveWork> wb = comm.all_reduce_async(b, ReduceOp::kSum);
    if (worker0) {
      if (!wb->done()) pending_when_issued.fetch_add(1);
      if (worker0_calls.fetch_add(1) + 1 == kLocal) worker0_issued.store(true);
    }
    // A sync collective issued after them runs after them (matched by order on every rank).
    Tensor c = Tensor::from_vector<float>({float(rank)}, Shape{1});
    comm.broadcast(c, 3);
    EXPECT_TRUE(wa->done() && wb->done());
    wa->wait();
    wb->wait();
    EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{10.0f, 100.0f}));
    EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1000.0f}));
    EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{3.0f}));
  });
  EXPECT_EQ(pending_when_issued.load(), kLocal);  // both still waiting for worker 1
}

TEST(HierarchicalGroup, AnAbortedAsyncAllReduceFailsInItsWait) {
  TwoByTwo group;
  group.run([&](int rank, Communicator& comm) {
    if (rank >= kLocal) return;  // worker 1 never comes
    Tensor a = Tensor::from_vector<float>({1.0f}, Shape{1});
    std::shared_ptr<CollectiveWork> w = comm.all_reduce_async(a, ReduceOp::kSum);
    if (rank == 0) group.workers[0]->abort("worker 1 is gone (test)");
    EXPECT_THROW(w->wait(), Error);
  });
}

TEST(OrderedOps, RunWaitsForEverySubmittedOpAndWaitRethrows) {
  OrderedOps ops;
  std::vector<int> order;
  std::atomic<bool> release{false};
  auto first = ops.submit(
      [&] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!release.load() && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
        order.push_back(1);
      },
      Device::cpu());
  auto second = ops.submit([&] { order.push_back(2); throw ValueError("second failed"); },
                           Device::cpu());
  EXPECT_FALSE(first->done());  // submit returned while the first op waits
  release.store(true);
  ops.run([&] { order.push_back(3); });  // after both, on this thread
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  first->wait();
  EXPECT_THROW(second->wait(), ValueError);
}

TEST(RowsInASum, EveryFloat64ComesBackBitForBitThroughAFloat32Sum) {
  const std::vector<double> row0 = {0.0,
                                    -0.0,
                                    1.0 / 3.0,
                                    -1e308,
                                    std::numeric_limits<double>::denorm_min(),
                                    std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    double(uint64_t(1) << 60) + 1024.0};
  std::vector<double> row1(row0.rbegin(), row0.rend());
  std::vector<double> row2(row0.size(), 12345.678);
  const std::vector<std::vector<double>> rows = {row0, row1, row2};
  Tensor sum = rows_in_a_sum_slot(rows[0], 0, 3);
  for (int s = 1; s < 3; ++s) sum = sum + rows_in_a_sum_slot(rows[size_t(s)], s, 3);
  ASSERT_EQ(sum.dtype(), DType::kFloat32);
  ASSERT_EQ(sum.numel(), 3 * int64_t(row0.size()) * kFloatsPerRowValue);
  const std::vector<double> back = rows_from_a_sum(sum, 3, int64_t(row0.size()));
  for (size_t s = 0; s < 3; ++s) {
    for (size_t i = 0; i < row0.size(); ++i) {
      const double want = rows[s][i], got = back[s * row0.size() + i];
      EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0) << "slot " << s << " value " << i;
    }
  }
  // A sum that added something other than zeros, or the wrong size, is refused.
  Tensor twice = rows_in_a_sum_slot(row0, 0, 2) + rows_in_a_sum_slot(row0, 0, 2);
  EXPECT_THROW(rows_from_a_sum(twice, 2, int64_t(row0.size())), ValueError);
  EXPECT_THROW(rows_from_a_sum(sum, 2, int64_t(row0.size())), ValueError);
}

// One local replica per worker: on the host the replica talks to the other workers directly
// (the cross-worker communicator itself); off the host (a GPU) it goes through the hierarchical
// path, which stages values on the host for Gloo. Here on CPUs: the staged path gives the same
// sums and gathers, and which path a group took.
TEST(HierarchicalGroup, OneReplicaOffTheHostIsStagedAndSumsTheSame) {
  for (const bool on_host : {true, false}) {
    SCOPED_TRACE(on_host ? "on the host" : "staged");
    InProcessGroup cross{kWorkers};
    std::vector<std::unique_ptr<HierarchicalGroup>> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.push_back(std::make_unique<HierarchicalGroup>(
          std::make_unique<InProcessGroup>(1), cross.communicator(w),
          [&cross](const std::string& reason) { cross.abort(reason); }, on_host));
      EXPECT_EQ(workers.back()->communicator(0) == cross.communicator(w), on_host);
    }
    std::vector<std::thread> threads;
    std::vector<std::vector<float>> sums(kWorkers), gathers(kWorkers);
    for (int w = 0; w < kWorkers; ++w) {
      threads.emplace_back([&, w] {
        Communicator& c = *workers[size_t(w)]->communicator(0);
        Tensor t = Tensor::from_vector<float>({float(w + 1), 2.0f}, Shape{2});
        c.all_reduce(t, ReduceOp::kSum);
        sums[size_t(w)] = t.to_vector<float>();
        gathers[size_t(w)] = c.all_gather(Tensor::from_vector<float>({float(w)}, Shape{1}))
                                 .to_vector<float>();
      });
    }
    for (auto& t : threads) t.join();
    for (int w = 0; w < kWorkers; ++w) {
      EXPECT_EQ(sums[size_t(w)], (std::vector<float>{3.0f, 4.0f}));
      EXPECT_EQ(gathers[size_t(w)], (std::vector<float>{0.0f, 1.0f}));
    }
  }
}

}  // namespace
}  // namespace strata::distribute
