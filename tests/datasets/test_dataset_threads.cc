// The Dataset stages that run threads: parallel map (order kept, errors re-thrown with the
// element index) and prefetch (bounded read-ahead, early destruction, errors in order).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

#include "framework/data/dataset.h"
#include "datasets/dataset_test_utils.h"
#include "support/test_helpers.h"

namespace strata::data {
namespace {

using strata::testing::expect_error;
using testing::range_ds;
using testing::scalars;

Element square_and_label(const Element& e) {
  const int64_t v = e[0].item<int64_t>();
  return {Tensor::scalar<int64_t>(v * v), Tensor::scalar<float>(float(v) + 0.5f)};
}

TEST(DatasetMap, SequentialAndParallelAgreeAndKeepOrder) {
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 40; ++i) expected.push_back(i * i);
  EXPECT_EQ(scalars(range_ds(40).map(square_and_label)), expected);
  for (int p : {2, 4, kAutotune}) {
    // Uneven work per element: later elements often finish first, yet come out in order.
    Dataset ds = range_ds(40).map(
        [](const Element& e) {
          if (e[0].item<int64_t>() % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
          return square_and_label(e);
        },
        p);
    EXPECT_EQ(scalars(ds), expected) << "num_parallel_calls=" << p;
    auto it = ds.make_iterator();
    auto e = it->next();
    ASSERT_TRUE(e);
    ASSERT_EQ(e->size(), 2u);
    EXPECT_EQ((*e)[1].item<float>(), 0.5f);
  }
  EXPECT_EQ(range_ds(40).map(square_and_label, 4).cardinality(), 40);
}

TEST(DatasetMap, RunsConcurrently) {
  std::atomic<int> active{0}, peak{0};
  Dataset ds = range_ds(16).map(
      [&](const Element& e) {
        const int now = ++active;
        int p = peak.load();
        while (now > p && !peak.compare_exchange_weak(p, now)) {}
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        --active;
        return e;
      },
      4);
  EXPECT_EQ(scalars(ds).size(), 16u);
  EXPECT_GT(peak.load(), 1);
}

TEST(DatasetMap, ErrorsCarryTheElementIndex) {
  auto fail_at_5 = [](const Element& e) -> Element {
    if (e[0].item<int64_t>() == 5) throw ValueError("bad value");
    return e;
  };
  for (int p : {1, 3}) {
    auto it = range_ds(10).map(fail_at_5, p).make_iterator();
    for (int i = 0; i < 5; ++i) {
      auto e = it->next();  // the elements before the failure still arrive, in order
      ASSERT_TRUE(e);
      EXPECT_EQ((*e)[0].item<int64_t>(), i);
    }
    expect_error<ValueError>([&] { it->next(); }, {"map", "element 5", "bad value"});
  }
  // A foreign exception type is wrapped in strata::Error, the original kept as nested.
  auto it = range_ds(3).map([](const Element&) -> Element { throw std::out_of_range("oops"); }, 2)
                .make_iterator();
  try {
    it->next();
    ADD_FAILURE() << "expected an exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("element 0: oops"), std::string::npos) << e.what();
    EXPECT_THROW(std::rethrow_if_nested(e), std::out_of_range);
  }
}

TEST(DatasetMap, EarlyDestructionDoesNotHang) {
  Dataset ds = range_ds(1000).map(
      [](const Element& e) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        return e;
      },
      4);
  auto it = ds.make_iterator();
  EXPECT_TRUE(it->next());
  it.reset();  // joins the workers; queued work is dropped
}

TEST(DatasetPrefetch, SameElementsAsWithout) {
  Dataset ds = range_ds(25).map(square_and_label, 2).batch(4);
  std::vector<std::vector<int64_t>> plain, prefetched;
  for (auto* out : {&plain, &prefetched}) {
    auto it = (out == &plain ? ds : ds.prefetch(2)).make_iterator();
    while (auto b = it->next()) out->push_back((*b)[0].to_vector<int64_t>());
  }
  EXPECT_EQ(plain.size(), 7u);
  EXPECT_EQ(plain, prefetched);
  EXPECT_EQ(scalars(range_ds(5).prefetch(kAutotune)), std::vector<int64_t>({0, 1, 2, 3, 4}));
}

TEST(DatasetPrefetch, ReadsAheadBoundedByTheBuffer) {
  std::atomic<int> produced{0};
  Dataset ds = Dataset::from_generator([&produced] {
    return [&produced]() -> std::optional<Element> {
      return Element{Tensor::scalar<int64_t>(produced++)};  // infinite
    };
  });
  auto it = ds.prefetch(3).make_iterator();
  EXPECT_EQ((*it->next())[0].item<int64_t>(), 0);
  // One handed out and three queued; then the thread waits (at most one more in production).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (produced.load() < 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(produced.load(), 4);
  EXPECT_LE(produced.load(), 5);
  it.reset();  // stops the infinite producer
}

TEST(DatasetPrefetch, EarlyDestructionWithSlowInputDoesNotHang) {
  Dataset ds = range_ds(1000)
                   .map(
                       [](const Element& e) {
                         std::this_thread::sleep_for(std::chrono::milliseconds(1));
                         return e;
                       },
                       2)
                   .prefetch(8);
  // A hang here would stop the test; ctest's timeout reports it (no timing assertion).
  for (int round = 0; round < 3; ++round) {
    auto it = ds.make_iterator();
    EXPECT_TRUE(it->next());
  }
  {
    auto never_started = ds.make_iterator();  // no thread yet
  }
}

TEST(DatasetPrefetch, ErrorsArriveInOrder) {
  Dataset ds = Dataset::from_generator([] {
    return [i = int64_t(0)]() mutable -> std::optional<Element> {
      if (i == 3) throw IndexError("reader broke at 3");
      return Element{Tensor::scalar<int64_t>(i++)};
    };
  });
  auto it = ds.prefetch(4).make_iterator();
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ((*it->next())[0].item<int64_t>(), i);
  expect_error<IndexError>([&] { it->next(); }, {"reader broke at 3"});
  EXPECT_FALSE(it->next());
}

TEST(DatasetPipeline, TypicalTrainingInput) {
  // x: [N, 4, 4] uint8 images, y: int32 labels; shuffled, mapped in parallel, batched, prefetched.
  const int64_t n = 100;
  Tensor x = Tensor::empty({n, 4, 4}, uint8);
  Tensor y = Tensor::empty({n}, int32);
  for (int64_t i = 0; i < n; ++i) {
    std::fill_n(x.data<uint8_t>() + i * 16, 16, uint8_t(i));
    y.data<int32_t>()[i] = int32_t(i);
  }
  Dataset ds = Dataset::from_tensor_slices({x, y})
                   .shuffle(n, 42)
                   .map([](const Element& e) { return Element{e[0].cast(float32), e[1]}; }, kAutotune)
                   .batch(32)
                   .prefetch(2);
  EXPECT_EQ(ds.cardinality(), 4);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<int> seen(size_t(n), 0);
    auto it = ds.make_iterator();
    while (auto b = it->next()) {
      const Tensor& bx = (*b)[0];
      const Tensor& by = (*b)[1];
      EXPECT_EQ(bx.dtype(), float32);
      EXPECT_EQ(bx.shape().dims()[1], 4);
      std::vector<float> xv = bx.to_vector<float>();
      std::vector<int32_t> yv = by.to_vector<int32_t>();
      for (size_t k = 0; k < yv.size(); ++k) {
        EXPECT_EQ(xv[k * 16 + 15], float(yv[k]));  // image and label stay paired
        ++seen[size_t(yv[k])];
      }
    }
    for (int c : seen) EXPECT_EQ(c, 1);
  }
}

}  // namespace
}  // namespace strata::data
