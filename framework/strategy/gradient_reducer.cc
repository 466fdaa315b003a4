#include "framework/strategy/gradient_reducer.h"

#include <memory>

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
  void finish(std::vector<Tensor>& out) {
    launch();
    for (Bucket& b : launched_) {
      b.work->wait();
      int64_t offset = 0;
      for (size_t k = 0; k < b.indices.size(); ++k) {
        const int64_t n = b.shapes[k].numel();
        out[b.indices[k]] = b.flat.slice(offset, offset + n).reshape(b.shapes[k]);
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

}  // namespace

std::vector<Tensor> compute_reduced_gradients(GradientTape& tape, const Tensor& loss,
                                              const std::vector<VariablePtr>& vars,
                                              size_t bucket_bytes) {
  ReplicaContext* replica = current_replica_context();
  if (replica == nullptr || replica->num_replicas_in_sync() <= 1) return tape.gradient(loss, vars);
  Bucketer buckets(*replica, bucket_bytes);
  tape.set_gradient_ready_callback([&](size_t i, const Tensor& g) { buckets.add(i, g); });
  std::vector<Tensor> grads = tape.gradient(loss, vars);
  tape.set_gradient_ready_callback(nullptr);
  buckets.finish(grads);
  return grads;
}

}  // namespace strata::distribute
