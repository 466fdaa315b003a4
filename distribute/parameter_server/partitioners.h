// Variable partitioners for ParameterServerStrategy (TensorFlow's
// tf.distribute.experimental.partitioners): how many shards a variable is split into along an
// axis, by a fixed count or by shard size. A partitioner answers, as TensorFlow's do, with the
// number of partitions on each axis: 1 everywhere except `axis`.
//
//   FixedShardsPartitioner(2)({10, 3}, float32)                  // {2, 1}
//   MinSizePartitioner(/*min_shard_bytes=*/4, /*max_shards=*/10)({6, 1}, float32)   // {6, 1}
//   MaxSizePartitioner(/*max_shard_bytes=*/4, /*max_shards=*/2)({6, 1}, float32)    // {2, 1}
//
// shard_shapes() then gives each shard's shape as ParameterServerStrategy makes them: the
// first (rows % shards) shards take one row more, e.g. {9, 20} in 2 shards -> {5, 20}, {4, 20}.
// Strata has no string tensors, so TensorFlow's bytes_per_string argument has no counterpart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/core/dtype.h"
#include "framework/core/shape.h"

namespace strata::distribute {

class Partitioner {
 public:
  virtual ~Partitioner() = default;
  // Partitions per axis of `shape`: 1 on every axis but `axis`, where it is at least 1 and at
  // most the axis' length. A scalar, or an axis outside the shape, is a ValueError.
  std::vector<int64_t> operator()(const Shape& shape, DType dtype, int axis = 0) const;
  // "FixedShardsPartitioner(num_shards=2)": for messages and logs.
  virtual std::string to_string() const = 0;

 protected:
  // The shard count along an axis of `rows` slices of `slice_bytes` bytes each (rows >= 1).
  virtual int64_t shards(int64_t rows, int64_t slice_bytes) const = 0;
};

// Exactly `num_shards` shards (fewer when the axis is shorter).
class FixedShardsPartitioner final : public Partitioner {
 public:
  explicit FixedShardsPartitioner(int64_t num_shards);
  std::string to_string() const override;

 private:
  int64_t shards(int64_t rows, int64_t slice_bytes) const override;
  int64_t num_shards_;
};

// As many shards as keep each at least `min_shard_bytes`, at most `max_shards` (TensorFlow's
// defaults: 256 KiB, 1 shard).
class MinSizePartitioner final : public Partitioner {
 public:
  explicit MinSizePartitioner(int64_t min_shard_bytes = int64_t(256) << 10, int64_t max_shards = 1);
  std::string to_string() const override;

 private:
  int64_t shards(int64_t rows, int64_t slice_bytes) const override;
  int64_t min_shard_bytes_, max_shards_;
};

// As few shards as keep each at most `max_shard_bytes` (a shard holds at least one slice, so a
// single slice larger than that is a shard of its own), at most `max_shards` when given.
class MaxSizePartitioner final : public Partitioner {
 public:
  explicit MaxSizePartitioner(int64_t max_shard_bytes,
                              std::optional<int64_t> max_shards = std::nullopt);
  std::string to_string() const override;

 private:
  int64_t shards(int64_t rows, int64_t slice_bytes) const override;
  int64_t max_shard_bytes_;
  std::optional<int64_t> max_shards_;
};

// The shapes of `num_shards` shards of `shape` along axis 0: the first shape[0] % num_shards
// shards have one row more. num_shards must be in [1, shape[0]] (a ValueError otherwise).
std::vector<Shape> shard_shapes(const Shape& shape, int64_t num_shards);

}  // namespace strata::distribute
