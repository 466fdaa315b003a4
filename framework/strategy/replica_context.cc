#include "framework/strategy/replica_context.h"

#include <string>

#include "framework/core/error.h"

namespace strata::distribute {
namespace {
thread_local ReplicaContext* t_context = nullptr;
}  // namespace

Tensor ReplicaContext::reduce_scatter(const Tensor& t, ReduceOp op) {
  const int n = num_replicas_in_sync();
  if (t.rank() == 0 || t.dim(0) % n != 0) {
    throw ShapeError("reduce_scatter: axis 0 of " + t.shape().to_string() + " must divide into " +
                     std::to_string(n) + " equal parts (one per replica)");
  }
  Tensor sum = t.clone();
  all_reduce(sum, op);
  const int64_t part = t.dim(0) / n;
  const int64_t r = replica_id_in_sync_group();
  return sum.slice(r * part, (r + 1) * part).clone();
}

ReplicaContext* current_replica_context() { return t_context; }

ReplicaContextScope::ReplicaContextScope(ReplicaContext* context) : previous_(t_context) {
  t_context = context;
}
ReplicaContextScope::~ReplicaContextScope() { t_context = previous_; }

void merge_call(ReplicaContext& replica, const std::function<void()>& fn) {
  // Nobody acts before every replica has arrived (all decided from the same state); nobody goes
  // on before fn is done.
  replica.barrier();
  if (replica.local_replica_id() == 0) {
    ReplicaContextScope cross_replica(nullptr);
    fn();
  }
  replica.barrier();
}

}  // namespace strata::distribute
