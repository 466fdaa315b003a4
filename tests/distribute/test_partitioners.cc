// Variable partitioners: TensorFlow's own cases (sharded_variable_test.py PartitionerTest,
// partitioned_variables_test.py for the size rules) and ParameterServerStrategy's shard shapes.
#include <gtest/gtest.h>

#include "distribute/parameter_server/partitioners.h"
#include "framework/core/error.h"

namespace strata::testing {
namespace {

using distribute::FixedShardsPartitioner;
using distribute::MaxSizePartitioner;
using distribute::MinSizePartitioner;
using distribute::shard_shapes;
using P = std::vector<int64_t>;

TEST(Partitioners, FixedShardsAsTensorFlow) {
  EXPECT_EQ(FixedShardsPartitioner(2)(Shape{10, 3}, float32), (P{2, 1}));
  // Never more shards than rows.
  EXPECT_EQ(FixedShardsPartitioner(5)(Shape{3, 4}, float32), (P{3, 1}));
  EXPECT_EQ(FixedShardsPartitioner(4)(Shape{3, 8}, float32, 1), (P{1, 4}));
}

TEST(Partitioners, MinSizeAsTensorFlow) {
  EXPECT_EQ(MinSizePartitioner(4, 2)(Shape{6, 1}, float32), (P{2, 1}));
  EXPECT_EQ(MinSizePartitioner(4, 10)(Shape{6, 1}, float32), (P{6, 1}));
  // min_max_variable_partitioner: 8 KiB in slices of at least 2 KiB -> 4.
  EXPECT_EQ(MinSizePartitioner(2 << 10, 100)(Shape{2048}, float32), (P{4}));
  // 8 MiB in slices of at least 256 KiB -> 32, on either axis; max_shards caps it.
  EXPECT_EQ(MinSizePartitioner(256 << 10, 100)(Shape{2048, 1024}, float32), (P{32, 1}));
  EXPECT_EQ(MinSizePartitioner(256 << 10, 16)(Shape{2048, 1024}, float32), (P{16, 1}));
  EXPECT_EQ(MinSizePartitioner(256 << 10, 100)(Shape{2048, 1024}, float32, 1), (P{1, 32}));
  // The defaults (256 KiB, at most 1 shard) never split.
  EXPECT_EQ(MinSizePartitioner()(Shape{100000, 64}, float32), (P{1, 1}));
  // A variable smaller than one shard stays whole.
  EXPECT_EQ(MinSizePartitioner(256 << 10, 8)(Shape{10, 10}, float32), (P{1, 1}));
}

TEST(Partitioners, MaxSizeAsTensorFlow) {
  EXPECT_EQ(MaxSizePartitioner(4)(Shape{6, 1}, float32), (P{6, 1}));
  EXPECT_EQ(MaxSizePartitioner(4, 2)(Shape{6, 1}, float32), (P{2, 1}));
  EXPECT_EQ(MaxSizePartitioner(1024)(Shape{6, 1}, float32), (P{1, 1}));
  // variable_axis_size_partitioner on a float32 (4, 8, 16, 32): slices of 16384, 8192, 4096 and
  // 2048 bytes along axes 0..3.
  const Shape s{4, 8, 16, 32};
  EXPECT_EQ(MaxSizePartitioner(131072)(s, float32, 0), (P{1, 1, 1, 1}));
  EXPECT_EQ(MaxSizePartitioner(65536)(s, float32, 1), (P{1, 1, 1, 1}));
  EXPECT_EQ(MaxSizePartitioner(32768)(s, float32, 2), (P{1, 1, 2, 1}));
  EXPECT_EQ(MaxSizePartitioner(2048)(s, float32, 3), (P{1, 1, 1, 32}));
  // A slice larger than max_shard_bytes is a shard of its own; max_shards caps the count.
  EXPECT_EQ(MaxSizePartitioner(1024, 32)(s, float32, 3), (P{1, 1, 1, 32}));
  EXPECT_EQ(MaxSizePartitioner(1024, 4)(s, float32, 3), (P{1, 1, 1, 4}));
  // The dtype's size counts: float64 slices are twice as large.
  EXPECT_EQ(MaxSizePartitioner(8)(Shape{6, 1}, float32), (P{3, 1}));
  EXPECT_EQ(MaxSizePartitioner(8)(Shape{6, 1}, float64), (P{6, 1}));
}

TEST(Partitioners, ShardShapesGiveTheRemainderToTheFirstShards) {
  // TensorFlow's parameter-server tutorial: a 9-row embedding over FixedShardsPartitioner(2).
  const std::vector<Shape> two = shard_shapes(Shape{9, 20}, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], (Shape{5, 20}));
  EXPECT_EQ(two[1], (Shape{4, 20}));
  const std::vector<Shape> three = shard_shapes(Shape{10}, 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0], (Shape{4}));
  EXPECT_EQ(three[1], (Shape{3}));
  EXPECT_EQ(three[2], (Shape{3}));
  EXPECT_EQ(shard_shapes(Shape{7, 2}, 1)[0], (Shape{7, 2}));
}

TEST(Partitioners, NonsenseIsAValueErrorNamingIt) {
  try {
    FixedShardsPartitioner(0);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("num_shards must be positive, got 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MinSizePartitioner(0, 1), ValueError);
  EXPECT_THROW(MinSizePartitioner(1, 0), ValueError);
  EXPECT_THROW(MaxSizePartitioner(0), ValueError);
  EXPECT_THROW(MaxSizePartitioner(4, 0), ValueError);
  try {
    FixedShardsPartitioner(2)(Shape{}, float32);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("a scalar has no axis to split"), std::string::npos) << e.what();
  }
  EXPECT_THROW(FixedShardsPartitioner(2)(Shape{4, 4}, float32, 2), ValueError);
  EXPECT_THROW(shard_shapes(Shape{3, 2}, 4), ValueError);
  EXPECT_THROW(shard_shapes(Shape{3, 2}, 0), ValueError);
  EXPECT_THROW(shard_shapes(Shape{}, 1), ValueError);
}

}  // namespace
}  // namespace strata::testing
