// The in-process Communicator: each collective's result on every rank, bit-identical across
// ranks, async ordering, and the errors for mismatched ranks and ranks that never come.
#include <gtest/gtest.h>

#include <functional>
#include <thread>
#include <vector>

#include <strata/strata.h>

#include "distribute/collectives/in_process_communicator.h"
#include "tests/distribute/distribute_test_utils.h"
#include "support/test_helpers.h"

namespace strata::distribute {
namespace {

using testing::on_ranks;

// Rank r's input: values that make the reduction order visible in float32 rounding.
Tensor input_of(int rank) {
  std::vector<float> v{1e8f, 1.f, -3.5f, 0.1f * float(rank + 1), float(rank) * 1e-7f, 2.f};
  for (float& x : v) x = x * float(rank % 2 == 0 ? 1 : -1) + float(rank);
  return Tensor::from_vector(v, Shape{2, 3});
}

TEST(InProcessCommunicator, AllReduceEveryOpBitIdenticalOnEveryRank) {
  for (int world : {1, 2, 4}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kMin}) {
      SCOPED_TRACE("world " + std::to_string(world) + " op " + std::to_string(int(op)));
      // Expected: the rank-order reduction, done here sequentially in float32.
      std::vector<float> expected = input_of(0).to_vector<float>();
      for (int r = 1; r < world; ++r) {
        const std::vector<float> x = input_of(r).to_vector<float>();
        for (size_t i = 0; i < x.size(); ++i) {
          if (op == ReduceOp::kMax) expected[i] = std::max(expected[i], x[i]);
          else if (op == ReduceOp::kMin) expected[i] = std::min(expected[i], x[i]);
          else expected[i] += x[i];
        }
      }
      if (op == ReduceOp::kMean) for (float& e : expected) e /= float(world);
      InProcessGroup group(world);
      std::vector<std::vector<float>> got(static_cast<size_t>(world));
      on_ranks(group, [&](int r, Communicator& c) {
        EXPECT_EQ(c.rank(), r);
        EXPECT_EQ(c.world_size(), world);
        Tensor t = input_of(r);
        c.all_reduce(t, op);
        got[size_t(r)] = t.to_vector<float>();
      });
      for (int r = 0; r < world; ++r) EXPECT_EQ(got[size_t(r)], expected) << "rank " << r;
    }
  }
}

TEST(InProcessCommunicator, IntegerAllReduce) {
  InProcessGroup group(3);
  on_ranks(group, [&](int r, Communicator& c) {
    Tensor t = Tensor::from_vector(std::vector<int64_t>{r, 10 * r}, Shape{2});
    c.all_reduce(t, ReduceOp::kSum);
    EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{3, 30}));
  });
}

TEST(InProcessCommunicator, BroadcastAllGatherReduceScatterBarrier) {
  InProcessGroup group(4);
  on_ranks(group, [&](int r, Communicator& c) {
    Tensor b = Tensor::from_vector(std::vector<float>{float(r), float(r) + 0.5f}, Shape{2});
    c.broadcast(b, 2);
    EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{2.f, 2.5f}));

    const Tensor g = c.all_gather(Tensor::from_vector(std::vector<float>{float(r)}, Shape{1, 1}));
    EXPECT_EQ(g.shape(), Shape({4, 1}));
    EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{0, 1, 2, 3}));

    // Rank r contributes r + i at row i; row i of the sum is 6 + 4i; rank r keeps row r.
    std::vector<float> rows;
    for (int i = 0; i < 4; ++i) rows.push_back(float(r + i));
    const Tensor s = c.reduce_scatter(Tensor::from_vector(rows, Shape{4, 1}), ReduceOp::kSum);
    EXPECT_EQ(s.shape(), Shape({1, 1}));
    EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{6.f + 4.f * float(r)}));
    c.barrier();
  });
}

TEST(InProcessCommunicator, AsyncAllReducesCompleteInIssueOrderWhateverTheWaitOrder) {
  InProcessGroup group(2);
  on_ranks(group, [&](int r, Communicator& c) {
    std::vector<Tensor> buckets;
    std::vector<std::shared_ptr<Work>> works;
    for (int b = 0; b < 5; ++b) {
      buckets.push_back(Tensor::from_vector(std::vector<float>{float(b * 10 + r)}, Shape{1}));
      works.push_back(c.all_reduce_async(buckets.back(), ReduceOp::kSum));
    }
    Tensor sync = Tensor::from_vector(std::vector<float>{1.f}, Shape{1});
    c.all_reduce(sync, ReduceOp::kSum);  // a synchronous one while the async ones run
    EXPECT_EQ(sync.to_vector<float>(), (std::vector<float>{2.f}));
    for (int b = 4; b >= 0; --b) {
      works[size_t(b)]->wait();
      EXPECT_TRUE(works[size_t(b)]->done());
      EXPECT_EQ(buckets[size_t(b)].to_vector<float>(), (std::vector<float>{float(20 * b + 1)}));
    }
  });
}

TEST(InProcessCommunicator, MismatchedShapesAndCollectivesAreErrorsOnEveryRank) {
  {
    InProcessGroup group(2);
    std::vector<std::string> messages(2);
    on_ranks(group, [&](int r, Communicator& c) {
      Tensor t = zeros(r == 0 ? Shape{2} : Shape{3});
      try {
        c.all_reduce(t, ReduceOp::kSum);
      } catch (const CollectiveError& e) {
        messages[size_t(r)] = e.what();
      }
    });
    for (const auto& m : messages) {
      EXPECT_NE(m.find("rank 1 passed float32 [3]"), std::string::npos) << m;
    }
  }
  {
    InProcessGroup group(2);
    int errors = 0;
    std::mutex m;
    on_ranks(group, [&](int r, Communicator& c) {
      try {
        if (r == 0) {
          c.barrier();
        } else {
          Tensor t = zeros({1});
          c.all_reduce(t, ReduceOp::kSum);
        }
      } catch (const CollectiveError& e) {
        EXPECT_NE(std::string(e.what()).find("same collectives in the same order"), std::string::npos);
        std::lock_guard<std::mutex> lock(m);
        ++errors;
      }
    });
    EXPECT_EQ(errors, 2);
  }
}

TEST(InProcessCommunicator, MissingRankTimesOutNamingIt) {
  InProcessGroup group(3, std::chrono::milliseconds(200));
  on_ranks(group, [&](int r, Communicator& c) {
    if (r == 1) return;  // never comes
    Tensor t = zeros({1});
    testing::expect_error<CollectiveError>([&] { c.all_reduce(t, ReduceOp::kSum); },
                                           {"timed out", "rank(s) 1 of 3"});
  });
}

TEST(InProcessCommunicator, EmptyTensors) {
  InProcessGroup group(2);
  on_ranks(group, [&](int, Communicator& c) {
    Tensor t = zeros({0, 3});
    c.all_reduce(t, ReduceOp::kSum);
    EXPECT_EQ(t.shape(), Shape({0, 3}));
    EXPECT_EQ(c.all_gather(t).shape(), Shape({0, 3}));
  });
}

TEST(InProcessCommunicator, ArgumentErrors) {
  testing::expect_error<ValueError>([] { InProcessGroup g(0); }, {"world_size"});
  InProcessGroup group(2);
  testing::expect_error<ValueError>([&] { group.communicator(2); }, {"rank 2"});
  auto c = group.communicator(0);
  Tensor t = zeros({3, 2});
  testing::expect_error<ValueError>([&] { c->broadcast(t, 5); }, {"root 5"});
  testing::expect_error<ShapeError>([&] { c->reduce_scatter(t, ReduceOp::kSum); },
                                    {"[3,2]", "2 equal parts"});
  testing::expect_error<ValueError>([&] { c->all_reduce(t, ReduceOp::kProd); }, {"SUM, MEAN"});
}

}  // namespace
}  // namespace strata::distribute
