// The Dataset pipeline: sources, shuffle, batch, repeat/take/skip/shard/cache, cardinality and
// argument errors. Parallel map and prefetch (threads) are in test_dataset_threads.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "framework/data/dataset.h"
#include "datasets/dataset_test_utils.h"
#include "support/test_helpers.h"

namespace strata::data {
namespace {

using strata::testing::expect_error;
using testing::range_ds;
using testing::scalars;

std::vector<int64_t> iota(int64_t a, int64_t b, int64_t step = 1) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; i += step) v.push_back(i);
  return v;
}

TEST(DatasetSources, FromTensorSlicesYieldsRowViews) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor y = Tensor::from_vector<int32_t>({7, 8, 9});
  Dataset ds = Dataset::from_tensor_slices({x, y});
  EXPECT_EQ(ds.cardinality(), 3);
  auto it = ds.make_iterator();
  for (int i = 0; i < 3; ++i) {
    auto e = it->next();
    ASSERT_TRUE(e);
    ASSERT_EQ(e->size(), 2u);
    EXPECT_EQ((*e)[0].shape(), Shape({2}));
    EXPECT_EQ((*e)[0].to_vector<float>(), std::vector<float>({float(2 * i + 1), float(2 * i + 2)}));
    EXPECT_EQ((*e)[1].shape(), Shape({}));
    EXPECT_EQ((*e)[1].item<int32_t>(), 7 + i);
    EXPECT_TRUE((*e)[0].shares_memory_with(x));  // a view, not a copy
  }
  EXPECT_FALSE(it->next());
  EXPECT_FALSE(it->next());  // stays at the end
}

TEST(DatasetSources, FromTensorsAndGenerator) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3});
  Dataset one = Dataset::from_tensors({x});
  EXPECT_EQ(one.cardinality(), 1);
  auto it = one.make_iterator();
  auto e = it->next();
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)[0].to_vector<float>(), std::vector<float>({1, 2, 3}));
  EXPECT_FALSE(it->next());

  int passes = 0;
  Dataset gen = Dataset::from_generator([&passes] {
    ++passes;
    return [i = int64_t(0)]() mutable -> std::optional<Element> {
      if (i == 4) return std::nullopt;
      return Element{Tensor::scalar<int64_t>(i++)};
    };
  });
  EXPECT_EQ(gen.cardinality(), kUnknownCardinality);
  EXPECT_EQ(scalars(gen), iota(0, 4));
  EXPECT_EQ(scalars(gen.repeat(2)), std::vector<int64_t>({0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(passes, 3);  // one generator per pass
  EXPECT_EQ(Dataset::from_generator([] { return [] { return std::optional<Element>(); }; }, 5).cardinality(), 5);
}

TEST(DatasetSources, IteratorsAreIndependent) {
  Dataset ds = range_ds(5);
  auto a = ds.make_iterator();
  auto b = ds.make_iterator();
  EXPECT_EQ((*a->next())[0].item<int64_t>(), 0);
  EXPECT_EQ((*a->next())[0].item<int64_t>(), 1);
  EXPECT_EQ((*b->next())[0].item<int64_t>(), 0);
  EXPECT_EQ((*a->next())[0].item<int64_t>(), 2);
}

TEST(DatasetShuffle, SameSeedSameOrderEveryElementOnce) {
  Dataset ds = range_ds(100);
  std::vector<int64_t> a = scalars(ds.shuffle(100, 7));
  std::vector<int64_t> b = scalars(ds.shuffle(100, 7));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, iota(0, 100));
  EXPECT_NE(a, scalars(ds.shuffle(100, 8)));
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(0, 100));
}

TEST(DatasetShuffle, ReshuffleEachPassIsReproducible) {
  Dataset ds = range_ds(50).shuffle(50, 3);
  std::vector<int64_t> p0 = scalars(ds), p1 = scalars(ds);
  EXPECT_NE(p0, p1);
  std::vector<int64_t> s1 = p1;
  std::sort(s1.begin(), s1.end());
  EXPECT_EQ(s1, iota(0, 50));
  // A pipeline rebuilt with the same seed repeats the same sequence of epochs.
  Dataset again = range_ds(50).shuffle(50, 3);
  EXPECT_EQ(scalars(again), p0);
  EXPECT_EQ(scalars(again), p1);
  // repeat() opens a new pass of the shuffle per epoch.
  std::vector<int64_t> two = scalars(range_ds(50).shuffle(50, 3).repeat(2));
  EXPECT_EQ(std::vector<int64_t>(two.begin(), two.begin() + 50), p0);
  EXPECT_EQ(std::vector<int64_t>(two.begin() + 50, two.end()), p1);

  Dataset fixed = range_ds(50).shuffle(50, 3, /*reshuffle_each_iteration=*/false);
  EXPECT_EQ(scalars(fixed), scalars(fixed));
}

// state() / restore_state(): the pass counts of every reshuffling shuffle in the pipeline, so a
// resumed run (BackupAndRestore) makes the passes the interrupted one would have made next.
TEST(DatasetShuffle, StateRestoresThePassCounts) {
  Dataset ds = range_ds(20).shuffle(20, 3).batch(4).shuffle(5, 9);
  EXPECT_EQ(ds.state(), (std::vector<uint64_t>{0, 0}));
  auto first_rows = [](const Dataset& d) {
    std::vector<int64_t> out;
    auto it = d.make_iterator();
    while (auto e = it->next()) out.push_back((*e)[0].to_vector<int64_t>()[0]);
    return out;
  };
  first_rows(ds);
  const std::vector<uint64_t> saved = ds.state();
  EXPECT_EQ(saved, (std::vector<uint64_t>{1, 1}));
  const std::vector<int64_t> second = first_rows(ds);
  const std::vector<int64_t> third = first_rows(ds);
  EXPECT_NE(second, third);
  // A fresh copy of the pipeline, restored, makes pass 2 again.
  Dataset rebuilt = range_ds(20).shuffle(20, 3).batch(4).shuffle(5, 9);
  rebuilt.restore_state(saved);
  EXPECT_EQ(first_rows(rebuilt), second);
  EXPECT_EQ(first_rows(rebuilt), third);
  expect_error<ValueError>([&] { rebuilt.restore_state({1}); }, {"shorter"});
  expect_error<ValueError>([&] { rebuilt.restore_state({1, 2, 3}); }, {"3 values", "2"});
}

TEST(DatasetShuffle, SmallBufferOnlyMixesLocally) {
  // With buffer 1 nothing moves; with buffer 3 element i comes out at position >= i - 2.
  EXPECT_EQ(scalars(range_ds(10).shuffle(1, 1)), iota(0, 10));
  std::vector<int64_t> v = scalars(range_ds(40).shuffle(3, 1));
  ASSERT_EQ(v.size(), 40u);
  for (size_t pos = 0; pos < v.size(); ++pos) EXPECT_LE(v[pos], int64_t(pos) + 2);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, iota(0, 40));
}

TEST(DatasetShuffle, UnseededFollowsTheGlobalSeed) {
  set_random_seed(11);
  std::vector<int64_t> a = scalars(range_ds(30).shuffle(30));
  std::vector<int64_t> a2 = scalars(range_ds(30).shuffle(30));  // the next draw: another order
  set_random_seed(11);
  EXPECT_EQ(scalars(range_ds(30).shuffle(30)), a);
  EXPECT_NE(a, a2);
}

TEST(DatasetBatch, StacksWithRemainderOrDropsIt) {
  Tensor x = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {5, 2});
  Tensor y = Tensor::from_vector<uint8_t>({10, 11, 12, 13, 14});
  Dataset ds = Dataset::from_tensor_slices({x, y}).batch(2);
  EXPECT_EQ(ds.cardinality(), 3);
  auto it = ds.make_iterator();
  auto b0 = it->next();
  ASSERT_TRUE(b0);
  EXPECT_EQ((*b0)[0].shape(), Shape({2, 2}));
  EXPECT_EQ((*b0)[0].to_vector<float>(), std::vector<float>({0, 1, 2, 3}));
  EXPECT_EQ((*b0)[1].dtype(), uint8);
  EXPECT_EQ((*b0)[1].to_vector<int>(), std::vector<int>({10, 11}));
  EXPECT_TRUE(it->next());
  auto b2 = it->next();
  ASSERT_TRUE(b2);
  EXPECT_EQ((*b2)[0].shape(), Shape({1, 2}));
  EXPECT_EQ((*b2)[0].to_vector<float>(), std::vector<float>({8, 9}));
  EXPECT_EQ((*b2)[1].to_vector<int>(), std::vector<int>({14}));
  EXPECT_FALSE(it->next());

  Dataset dropped = Dataset::from_tensor_slices({x, y}).batch(2, /*drop_remainder=*/true);
  EXPECT_EQ(dropped.cardinality(), 2);
  int n = 0;
  auto it2 = dropped.make_iterator();
  while (auto b = it2->next()) {
    EXPECT_EQ((*b)[0].dim(0), 2);
    ++n;
  }
  EXPECT_EQ(n, 2);
  EXPECT_EQ(range_ds(6).batch(3, true).cardinality(), 2);
  EXPECT_EQ(range_ds(2).batch(3, true).cardinality(), 0);
  EXPECT_FALSE(range_ds(2).batch(3, true).make_iterator()->next());
}

TEST(DatasetBatch, ScalarsAndNestedBatches) {
  Dataset ds = range_ds(6).batch(3).batch(2);
  auto it = ds.make_iterator();
  auto b = it->next();
  ASSERT_TRUE(b);
  EXPECT_EQ((*b)[0].shape(), Shape({2, 3}));
  EXPECT_EQ((*b)[0].to_vector<int64_t>(), iota(0, 6));
  EXPECT_FALSE(it->next());
}

TEST(DatasetBatch, MismatchedShapesNameThePosition) {
  Dataset ds = Dataset::from_generator([] {
    return [i = 0]() mutable -> std::optional<Element> {
      if (i == 3) return std::nullopt;
      ++i;
      return Element{Tensor::scalar<float>(1.f), Tensor::from_vector(std::vector<float>(size_t(i), 0.f))};
    };
  });
  expect_error<ShapeError>([&] { ds.batch(3).make_iterator()->next(); },
                           {"batch", "component 1", "[1]", "[2]"});
}

TEST(DatasetBatch, BatchesImageSlices) {
  Tensor images = Tensor::empty({1024, 28, 28}, uint8);
  std::fill_n(images.data<uint8_t>(), images.numel(), uint8_t(3));
  Dataset ds = Dataset::from_tensor_slices({images}).batch(128);
  auto it = ds.make_iterator();
  int batches = 0;
  while (auto b = it->next()) {
    EXPECT_EQ((*b)[0].shape(), Shape({128, 28, 28}));
    EXPECT_EQ((*b)[0].data<uint8_t>()[128 * 784 - 1], 3);
    ++batches;
  }
  EXPECT_EQ(batches, 8);
}

TEST(DatasetBasic, RepeatTakeSkip) {
  Dataset ds = range_ds(3);
  EXPECT_EQ(scalars(ds.repeat(2)), std::vector<int64_t>({0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(ds.repeat(2).cardinality(), 6);
  EXPECT_EQ(ds.repeat().cardinality(), kInfiniteCardinality);
  EXPECT_EQ(scalars(ds.repeat().take(7)), std::vector<int64_t>({0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(ds.repeat().take(7).cardinality(), 7);
  EXPECT_TRUE(scalars(ds.repeat(0)).empty());
  EXPECT_EQ(ds.repeat(0).cardinality(), 0);
  EXPECT_TRUE(scalars(range_ds(0).repeat()).empty());  // an empty input ends, not spins

  EXPECT_EQ(scalars(range_ds(10).take(3)), iota(0, 3));
  EXPECT_EQ(range_ds(10).take(30).cardinality(), 10);
  EXPECT_EQ(range_ds(10).take(-1).cardinality(), 10);
  EXPECT_EQ(scalars(range_ds(10).skip(7)), iota(7, 10));
  EXPECT_EQ(range_ds(10).skip(7).cardinality(), 3);
  EXPECT_EQ(range_ds(10).skip(70).cardinality(), 0);
  EXPECT_TRUE(scalars(range_ds(10).skip(-1)).empty());
  EXPECT_EQ(scalars(range_ds(10).skip(2).take(3)), iota(2, 5));
  EXPECT_EQ(scalars(ds.repeat(3).skip(4)), std::vector<int64_t>({1, 2, 0, 1, 2}));
  EXPECT_EQ(ds.repeat().skip(4).cardinality(), kInfiniteCardinality);
}

TEST(DatasetBasic, Shard) {
  EXPECT_EQ(scalars(range_ds(10).shard(3, 0)), std::vector<int64_t>({0, 3, 6, 9}));
  EXPECT_EQ(scalars(range_ds(10).shard(3, 1)), std::vector<int64_t>({1, 4, 7}));
  EXPECT_EQ(scalars(range_ds(10).shard(3, 2)), std::vector<int64_t>({2, 5, 8}));
  EXPECT_EQ(range_ds(10).shard(3, 0).cardinality(), 4);
  EXPECT_EQ(range_ds(10).shard(3, 2).cardinality(), 3);
  EXPECT_EQ(range_ds(2).shard(3, 2).cardinality(), 0);
  EXPECT_TRUE(scalars(range_ds(2).shard(3, 2)).empty());
  // The sharded batches of a worker: shard before batching, as multi-worker input does.
  Dataset worker = range_ds(8).shard(2, 1).batch(2);
  auto it = worker.make_iterator();
  EXPECT_EQ((*it->next())[0].to_vector<int64_t>(), std::vector<int64_t>({1, 3}));
  EXPECT_EQ((*it->next())[0].to_vector<int64_t>(), std::vector<int64_t>({5, 7}));
  EXPECT_FALSE(it->next());
}

TEST(DatasetBasic, SkipThroughIteratorsIsConsistentWithNext) {
  // Iterator::skip (the cheap resume path) must land where next() would have.
  std::vector<Dataset> pipelines = {
      range_ds(23).batch(4),
      range_ds(23).batch(4, true),
      range_ds(23).shard(3, 1),
      range_ds(7).repeat(3),
      range_ds(23).skip(5).take(12),
      range_ds(23).map([](const Element& e) { return e; }),
      range_ds(23).cache(),
      range_ds(23).map([](const Element& e) { return e; }, 3).batch(4),  // the generic batch path
      range_ds(23).map([](const Element& e) { return e; }, 3).batch(4, true),
      range_ds(23).shuffle(8, 1, /*reshuffle_each_iteration=*/false),
      range_ds(23).prefetch(2),
  };
  for (const Dataset& ds : pipelines) {
    std::vector<std::vector<int64_t>> all;
    auto full = ds.make_iterator();
    while (auto e = full->next()) all.push_back((*e)[0].to_vector<int64_t>());
    for (int64_t k : {0, 1, 2, 5, 100}) {
      auto it = ds.make_iterator();
      const int64_t skipped = it->skip(k);
      EXPECT_EQ(skipped, std::min<int64_t>(k, int64_t(all.size())));
      std::vector<std::vector<int64_t>> rest;
      while (auto e = it->next()) rest.push_back((*e)[0].to_vector<int64_t>());
      EXPECT_EQ(rest, std::vector<std::vector<int64_t>>(all.begin() + skipped, all.end())) << "k=" << k;
    }
  }
}

TEST(DatasetBasic, CacheKeepsOnlyACompletePass) {
  int passes = 0;
  Dataset gen = Dataset::from_generator([&passes] {
    ++passes;
    return [i = int64_t(0), p = passes]() mutable -> std::optional<Element> {
      if (i == 4) return std::nullopt;
      return Element{Tensor::scalar<int64_t>(10 * p + i++)};
    };
  });
  Dataset cached = gen.cache();
  {
    auto early = cached.make_iterator();  // stops after two elements: nothing is cached
    EXPECT_EQ((*early->next())[0].item<int64_t>(), 10);
    EXPECT_EQ((*early->next())[0].item<int64_t>(), 11);
  }
  EXPECT_EQ(scalars(cached), std::vector<int64_t>({20, 21, 22, 23}));  // this pass completes
  EXPECT_EQ(scalars(cached), std::vector<int64_t>({20, 21, 22, 23}));  // replayed
  EXPECT_EQ(scalars(cached.repeat(2)), std::vector<int64_t>({20, 21, 22, 23, 20, 21, 22, 23}));
  EXPECT_EQ(passes, 2);

  // Shuffle after cache reshuffles the cached elements every epoch.
  Dataset shuffled = range_ds(20).cache().shuffle(20, 5);
  std::vector<int64_t> a = scalars(shuffled), b = scalars(shuffled);
  EXPECT_NE(a, b);
  std::sort(b.begin(), b.end());
  EXPECT_EQ(b, iota(0, 20));
}

TEST(DatasetBasic, Cardinality) {
  Dataset gen = Dataset::from_generator([] { return [] { return std::optional<Element>(); }; });
  EXPECT_EQ(range_ds(10).batch(3).cardinality(), 4);
  EXPECT_EQ(range_ds(10).batch(3, true).cardinality(), 3);
  EXPECT_EQ(range_ds(10).repeat().batch(3).cardinality(), kInfiniteCardinality);
  EXPECT_EQ(gen.batch(3).cardinality(), kUnknownCardinality);
  EXPECT_EQ(gen.repeat().cardinality(), kUnknownCardinality);
  EXPECT_EQ(gen.take(0).cardinality(), 0);
  EXPECT_EQ(gen.take(3).cardinality(), kUnknownCardinality);
  EXPECT_EQ(range_ds(10).shuffle(4, 1).map([](const Element& e) { return e; }).prefetch(2).cardinality(), 10);
  EXPECT_EQ(range_ds(10).cache().shard(4, 3).cardinality(), 2);
  EXPECT_EQ(range_ds(10).repeat(3).skip(5).take(20).batch(4).cardinality(), 5);
}

TEST(DatasetErrors, ArgumentsAreValidated) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  Tensor y = Tensor::from_vector<float>({1, 2, 3}, {3});
  expect_error<ShapeError>([&] { Dataset::from_tensor_slices({x, y}); },
                           {"from_tensor_slices", "component 1", "[4]", "[3]"});
  expect_error<ValueError>([] { Dataset::from_tensor_slices({}); }, {"from_tensor_slices", "none"});
  expect_error<ShapeError>([] { Dataset::from_tensor_slices({Tensor::scalar(1.f)}); },
                           {"from_tensor_slices", "scalar"});
  expect_error<ValueError>([] { Dataset::from_tensors({}); }, {"from_tensors"});
  expect_error<ValueError>([] { Dataset::from_generator(nullptr); }, {"from_generator"});
  Dataset ds = range_ds(4);
  expect_error<ValueError>([&] { ds.batch(0); }, {"batch", "batch_size", "0"});
  expect_error<ValueError>([&] { ds.batch(-3); }, {"batch", "-3"});
  expect_error<ValueError>([&] { ds.shuffle(0, 1); }, {"shuffle", "buffer_size", "0"});
  expect_error<ValueError>([&] { ds.shard(0, 0); }, {"shard", "num_shards", "0"});
  expect_error<ValueError>([&] { ds.shard(3, 3); }, {"shard", "index", "[0, 3)", "3"});
  expect_error<ValueError>([&] { ds.shard(3, -1); }, {"shard", "-1"});
  expect_error<ValueError>([&] { ds.prefetch(0); }, {"prefetch", "buffer_size", "0"});
  expect_error<ValueError>([&] { ds.map(nullptr); }, {"map", "fn"});
  expect_error<ValueError>([&] { ds.map([](const Element& e) { return e; }, 0); },
                           {"map", "num_parallel_calls", "0"});
  expect_error<ValueError>([] { Dataset(nullptr).make_iterator(); }, {"null"});
  expect_error<ValueError>([] { Dataset(nullptr).batch(2); }, {"batch", "null"});
}

}  // namespace
}  // namespace strata::data
