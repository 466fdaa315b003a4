#include "framework/strategy/gradient_reducer.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include "framework/backend/backend.h"
#include "framework/ops/creation.h"
#include "framework/ops/shape_ops.h"
#include "framework/strategy/replica_context.h"
#include "framework/strategy/strategy.h"

namespace strata::distribute {
namespace {

// Gradients in the order they finished, cut into buckets that are reduced as one flat tensor:
// all-reduced as soon as a bucket is full (whole gradients), or reduce-scattered at the end
// (shards: this replica's range of each bucket).
class Bucketer {
 public:
  Bucketer(ReplicaContext& replica, size_t bucket_bytes, bool shard)
      : replica_(replica),
        bucket_bytes_(bucket_bytes),
        first_bucket_bytes_(std::min(bucket_bytes, kFirstGradientBucketBytes)),
        shard_(shard) {}

  void add(size_t index, const Tensor& grad) {
    if (!grad.defined()) return;  // every replica agrees: same model, same graph
    if (shard_ && grad.nbytes() >= kOwnShardBucketBytes) {
      // Reduce-scattered where it lies: copying it into a bucket would cost as much as the
      // reduction itself.
      Bucket own;
      add_part(own, index, grad);
      closed_.push_back(std::move(own));
      return;
    }
    if (!open_.indices.empty() && grad.dtype() != open_.flat_parts[0].dtype()) close();
    add_part(open_, index, grad);
    if (open_.bytes >= (closed_.empty() ? first_bucket_bytes_ : bucket_bytes_)) close();
  }

  // Whether finish() can carry a strategy's step state (whole gradients: all-reduced buckets).
  bool can_fold() const { return !shard_; }

  // Waits for every bucket and writes the reduced gradients (or this replica's shards of them)
  // into `out`. `fold` (can_fold() only): the strategy's step state, summed in the last bucket
  // (one of float32: a bucket of another dtype goes alone and the state after it).
  void finish(std::vector<Gradient>& out, std::optional<Strategy::StepStateFold> fold) {
    if (fold) {
      if (!open_.indices.empty() && open_.flat_parts[0].dtype() != DType::kFloat32) close();
      const Device device =
          open_.indices.empty() ? replica_.device() : open_.flat_parts[0].device();
      add_part(open_, kFoldIndex, fold->payload.to(device));
      open_.receive_fold = std::move(fold->receive);
    }
    close();
    for (Bucket& b : closed_) shard_ ? scatter(b, out) : wait_all_reduced(b, out);
  }

 private:
  struct Bucket {
    std::vector<size_t> indices;
    std::vector<Shape> shapes;
    std::vector<Tensor> flat_parts;
    size_t bytes = 0;
    Tensor flat;
    std::shared_ptr<CollectiveWork> work;
    std::function<void(const Tensor&)> receive_fold;  // gets the part at kFoldIndex
  };

  // The index of the part that is the strategy's step state, not a gradient.
  static constexpr size_t kFoldIndex = std::numeric_limits<size_t>::max();

  static void add_part(Bucket& b, size_t index, const Tensor& grad) {
    b.indices.push_back(index);
    b.shapes.push_back(grad.shape());
    b.flat_parts.push_back(grad.reshape(Shape{grad.numel()}));
    b.bytes += grad.nbytes();
  }

  void close() {
    if (open_.indices.empty()) return;
    Bucket b = std::move(open_);
    open_ = Bucket{};
    if (!shard_) {
      // In place, so the flat tensor is the bucket's own (a gradient may share its memory with
      // another gradient).
      b.flat = b.flat_parts.size() == 1 ? b.flat_parts[0].clone() : concat(b.flat_parts, 0);
      b.flat_parts.clear();
      b.work = replica_.all_reduce_async(b.flat, ReduceOp::kSum);
    }
    closed_.push_back(std::move(b));
  }

  static void wait_all_reduced(Bucket& b, std::vector<Gradient>& out) {
    b.work->wait();
    int64_t offset = 0;
    for (size_t k = 0; k < b.indices.size(); ++k) {
      const int64_t n = b.shapes[k].numel();
      const Tensor part = b.flat.slice(offset, offset + n);
      if (b.indices[k] == kFoldIndex) {
        b.receive_fold(part.to(Device::cpu()));
      } else {
        out[b.indices[k]] = Gradient(part.reshape(b.shapes[k]));
      }
      offset += n;
    }
  }

  // The bucket, padded with zeros to a multiple of the replicas, is reduce-scattered: replica r
  // gets elements [r * part, (r + 1) * part) of the sum, and each gradient of the bucket the
  // part of that range that falls in it (possibly none: an empty shard).
  void scatter(Bucket& b, std::vector<Gradient>& out) {
    const int64_t n = replica_.num_replicas_in_sync();
    const int64_t r = replica_.replica_id_in_sync_group();
    int64_t total = 0;
    for (const Tensor& p : b.flat_parts) total += p.numel();
    const int64_t padded = (total + n - 1) / n * n;
    std::vector<Tensor> parts = std::move(b.flat_parts);
    if (padded != total) {
      parts.push_back(zeros(Shape{padded - total}, parts[0].dtype(), parts[0].device()));
    }
    const Tensor flat = parts.size() == 1 ? parts[0] : concat(parts, 0);
    parts.clear();
    const Tensor mine = replica_.reduce_scatter(flat, ReduceOp::kSum);
    const int64_t part = padded / n, first = r * part, last = first + part;
    int64_t offset = 0;
    for (size_t k = 0; k < b.indices.size(); ++k) {
      const int64_t size = b.shapes[k].numel();
      const int64_t lo = std::max(offset, first), hi = std::min(offset + size, last);
      out[b.indices[k]] = lo < hi ? Gradient::shard(mine.slice(lo - first, hi - first), lo - offset,
                                                    b.shapes[k])
                                  : Gradient::shard(mine.slice(0, 0), 0, b.shapes[k]);
      offset += size;
    }
  }

  ReplicaContext& replica_;
  size_t bucket_bytes_;
  size_t first_bucket_bytes_;
  bool shard_;
  Bucket open_;
  std::vector<Bucket> closed_;
};

// A table's rows summed over the replicas. The replicas touched different rows, and there is no
// all-gather of uneven sizes, so the rows are summed densely; a count of who touched each row is
// summed beside them, and the rows any replica touched stay the touched rows. The update is then
// the one a single replica would make over the global batch (with SGD momentum, untouched rows
// keep their slots), not a dense one.
Gradient reduce_rows(ReplicaContext& replica, const IndexedSlices& rows) {
  Tensor sum = rows.to_dense();
  Tensor touched = zeros(Shape{rows.dense_shape[0]}, DType::kFloat32, sum.device());
  backend_for(touched).scatter_add(ones(Shape{rows.indices.numel()}, DType::kFloat32, sum.device()),
                                   rows.indices, 0, touched);
  replica.all_reduce(sum, ReduceOp::kSum);
  replica.all_reduce(touched, ReduceOp::kSum);
  const std::vector<float> counts = touched.to_vector<float>();
  std::vector<int64_t> ids;
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > 0) ids.push_back(int64_t(r));
  }
  IndexedSlices out;
  out.dense_shape = rows.dense_shape;
  out.indices = Tensor::from_vector(ids, Shape{int64_t(ids.size())}).to(sum.device());
  out.values = Tensor::empty(IndexedSlices::rows_shape(rows.dense_shape, int64_t(ids.size())),
                             sum.dtype(), sum.device());
  backend_for(sum).gather(sum, out.indices, 0, out.values);
  return Gradient(std::move(out));
}

}  // namespace

std::vector<Gradient> compute_reduced_gradients(GradientTape& tape, const Tensor& loss,
                                                const std::vector<VariablePtr>& vars,
                                                size_t bucket_bytes, GradientReduction reduction,
                                                StepState state) {
  ReplicaContext* replica = current_replica_context();
  if (replica == nullptr || replica->num_replicas_in_sync() <= 1) {
    return tape.gradient_with_slices(loss, vars);
  }
  // Every replica decides alike: the same variables in the same strategy.
  const bool shard = reduction == GradientReduction::kShardWhereAccepted && !vars.empty() &&
                     std::all_of(vars.begin(), vars.end(), [](const VariablePtr& v) {
                       return v && v->accepts_gradient_shards();
                     });
  Bucketer buckets(*replica, bucket_bytes, shard);
  // Dense gradients go to the buckets as they finish; a table's rows come back in the result.
  tape.set_gradient_ready_callback([&](size_t i, const Tensor& g) { buckets.add(i, g); });
  std::vector<Gradient> grads;
  try {
    grads = tape.gradient_with_slices(loss, vars);
  } catch (...) {
    tape.set_gradient_ready_callback(nullptr);
    throw;
  }
  tape.set_gradient_ready_callback(nullptr);
  std::optional<Strategy::StepStateFold> fold;
  if (state == StepState::kFinal && buckets.can_fold()) {
    fold = get_strategy()->fold_step_state(replica->local_replica_id());
  }
  buckets.finish(grads, std::move(fold));
  // Every replica has the same sparse sources (same model), so these collectives pair up.
  for (Gradient& g : grads) {
    if (g.is_sparse()) g = reduce_rows(*replica, g.slices());
  }
  return grads;
}

}  // namespace strata::distribute
