#include "framework/strategy/gradient_reducer.h"

#include <memory>

#include "framework/backend/backend.h"
#include "framework/ops/creation.h"
#include "framework/ops/shape_ops.h"
#include "framework/strategy/replica_context.h"

namespace strata::distribute {
namespace {

// Gradients in the order they finished, cut into buckets that are all-reduced as one flat tensor.
class Bucketer {
 public:
  Bucketer(ReplicaContext& replica, size_t bucket_bytes)
      : replica_(replica), bucket_bytes_(bucket_bytes) {}

  void add(size_t index, const Tensor& grad) {
    if (!grad.defined()) return;  // every replica agrees: same model, same graph
    if (!open_.indices.empty() && grad.dtype() != open_.flat_parts[0].dtype()) launch();
    open_.indices.push_back(index);
    open_.shapes.push_back(grad.shape());
    open_.flat_parts.push_back(grad.reshape(Shape{grad.numel()}));
    open_.bytes += grad.nbytes();
    if (open_.bytes >= bucket_bytes_) launch();
  }

  // Waits for every bucket and writes the summed gradients into `out`.
  void finish(std::vector<Gradient>& out) {
    launch();
    for (Bucket& b : launched_) {
      b.work->wait();
      int64_t offset = 0;
      for (size_t k = 0; k < b.indices.size(); ++k) {
        const int64_t n = b.shapes[k].numel();
        out[b.indices[k]] = Gradient(b.flat.slice(offset, offset + n).reshape(b.shapes[k]));
        offset += n;
      }
    }
  }

 private:
  struct Bucket {
    std::vector<size_t> indices;
    std::vector<Shape> shapes;
    std::vector<Tensor> flat_parts;
    size_t bytes = 0;
    Tensor flat;
    std::shared_ptr<CollectiveWork> work;
  };

  void launch() {
    if (open_.indices.empty()) return;
    Bucket b = std::move(open_);
    open_ = Bucket{};
    b.flat = b.flat_parts.size() == 1 ? b.flat_parts[0].clone() : concat(b.flat_parts, 0);
    b.flat_parts.clear();
    b.work = replica_.all_reduce_async(b.flat, ReduceOp::kSum);
    launched_.push_back(std::move(b));
  }

  ReplicaContext& replica_;
  size_t bucket_bytes_;
  Bucket open_;
  std::vector<Bucket> launched_;
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
                                                size_t bucket_bytes) {
  ReplicaContext* replica = current_replica_context();
  if (replica == nullptr || replica->num_replicas_in_sync() <= 1) {
    return tape.gradient_with_slices(loss, vars);
  }
  Bucketer buckets(*replica, bucket_bytes);
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
  buckets.finish(grads);
  // Every replica has the same sparse sources (same model), so these collectives pair up.
  for (Gradient& g : grads) {
    if (g.is_sparse()) g = reduce_rows(*replica, g.slices());
  }
  return grads;
}

}  // namespace strata::distribute
