#include "distribute/parameter_server/partitioners.h"

#include <algorithm>

#include "framework/core/error.h"

namespace strata::distribute {

namespace {

int64_t positive(int64_t value, const char* what, const char* who) {
  if (value < 1) {
    throw ValueError(std::string(who) + ": " + what + " must be positive, got " +
                     std::to_string(value));
  }
  return value;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::vector<int64_t> Partitioner::operator()(const Shape& shape, DType dtype, int axis) const {
  if (axis < 0 || axis >= shape.rank()) {
    throw ValueError(to_string() + ": cannot partition a variable of shape " +
                     shape.to_string() + " along axis " + std::to_string(axis) +
                     (shape.rank() == 0 ? " (a scalar has no axis to split)" : ""));
  }
  std::vector<int64_t> partitions(size_t(shape.rank()), 1);
  const int64_t rows = shape[axis];
  if (rows < 1) return partitions;  // an empty axis stays one (empty) shard
  const int64_t slice_bytes = shape.numel() / rows * int64_t(dtype_size(dtype));
  partitions[size_t(axis)] = std::clamp<int64_t>(shards(rows, slice_bytes), 1, rows);
  return partitions;
}

FixedShardsPartitioner::FixedShardsPartitioner(int64_t num_shards)
    : num_shards_(positive(num_shards, "num_shards", "FixedShardsPartitioner")) {}

std::string FixedShardsPartitioner::to_string() const {
  return "FixedShardsPartitioner(num_shards=" + std::to_string(num_shards_) + ")";
}

int64_t FixedShardsPartitioner::shards(int64_t rows, int64_t) const {
  return std::min(num_shards_, rows);
}

MinSizePartitioner::MinSizePartitioner(int64_t min_shard_bytes, int64_t max_shards)
    : min_shard_bytes_(positive(min_shard_bytes, "min_shard_bytes", "MinSizePartitioner")),
      max_shards_(positive(max_shards, "max_shards", "MinSizePartitioner")) {}

std::string MinSizePartitioner::to_string() const {
  return "MinSizePartitioner(min_shard_bytes=" + std::to_string(min_shard_bytes_) +
         ", max_shards=" + std::to_string(max_shards_) + ")";
}

int64_t MinSizePartitioner::shards(int64_t rows, int64_t slice_bytes) const {
  // TensorFlow's min_max_variable_partitioner: ceil(total bytes / min_shard_bytes), within
  // [1, min(rows, max_shards)].
  const int64_t by_size = ceil_div(rows * slice_bytes, min_shard_bytes_);
  return std::max<int64_t>(1, std::min({rows, max_shards_, by_size}));
}

MaxSizePartitioner::MaxSizePartitioner(int64_t max_shard_bytes, std::optional<int64_t> max_shards)
    : max_shard_bytes_(positive(max_shard_bytes, "max_shard_bytes", "MaxSizePartitioner")),
      max_shards_(max_shards) {
  if (max_shards_) positive(*max_shards_, "max_shards", "MaxSizePartitioner");
}

std::string MaxSizePartitioner::to_string() const {
  return "MaxSizePartitioner(max_shard_bytes=" + std::to_string(max_shard_bytes_) +
         ", max_shards=" + (max_shards_ ? std::to_string(*max_shards_) : "None") + ")";
}

int64_t MaxSizePartitioner::shards(int64_t rows, int64_t slice_bytes) const {
  // TensorFlow's variable_axis_size_partitioner: whole slices per shard (at least one), then
  // enough shards for every slice, capped by max_shards.
  const int64_t slices_per_shard = std::max<int64_t>(1, max_shard_bytes_ / std::max<int64_t>(1, slice_bytes));
  const int64_t n = ceil_div(rows, slices_per_shard);
  return max_shards_ ? std::min(*max_shards_, n) : n;
}

std::vector<Shape> shard_shapes(const Shape& shape, int64_t num_shards) {
  if (shape.rank() == 0 || num_shards < 1 || num_shards > std::max<int64_t>(1, shape[0])) {
    throw ValueError("shard_shapes: cannot split shape " + shape.to_string() + " into " +
                     std::to_string(num_shards) + " shards along axis 0 (expected 1 to " +
                     std::to_string(shape.rank() ? std::max<int64_t>(1, shape[0]) : 1) +
                     " shards of a shape of rank >= 1)");
  }
  const int64_t rows = shape[0], base = rows / num_shards, extra = rows % num_shards;
  std::vector<Shape> out;
  for (int64_t i = 0; i < num_shards; ++i) {
    Shape s = shape;
    s[0] = base + (i < extra ? 1 : 0);
    out.push_back(s);
  }
  return out;
}

}  // namespace strata::distribute
