#include "distribute/variables/central_variable.h"

#include "framework/autograd/grad_mode.h"
#include "framework/core/error.h"
#include "framework/strategy/replica_context.h"

namespace strata::distribute {

CentralVariable::CentralVariable(const VariableSpec& spec)
    : Variable(spec, NoStorage{}), central_(std::make_shared<Variable>(spec)) {}

Tensor CentralVariable::value() const {
  Tensor handle = central_->gradient_handle();
  return make_read(storage_of(*central_), handle.grad_node());
}

void CentralVariable::update(const Tensor& value, Update kind, const char* op) {
  check_update(value, op);
  NoGradGuard no_grad;
  const auto apply = [&](const Tensor& v) {
    if (kind == Update::kAssign) central_->assign(v);
    if (kind == Update::kAdd) central_->assign_add(v);
    if (kind == Update::kSub) central_->assign_sub(v);
  };
  ReplicaContext* c = current_replica_context();
  if (c == nullptr || c->num_replicas_in_sync() <= 1) return apply(value);
  Tensor v = value.to(c->device()).clone();
  switch (aggregation()) {
    case VariableAggregation::kSum: c->all_reduce(v, ReduceOp::kSum); break;
    case VariableAggregation::kMean: c->all_reduce(v, ReduceOp::kMean); break;
    case VariableAggregation::kOnlyFirstReplica: c->broadcast(v, 0); break;
    case VariableAggregation::kNone:
      throw ValueError("Variable '" + name() + "'." + op + " was called on a replica, but the "
                       "variable has aggregation none, so CentralStorageStrategy cannot tell how "
                       "to combine the replicas' updates; create it with aggregation sum, mean or "
                       "only_first_replica");
  }
  // Every replica has read the old value (the collective above is a meeting point); replica 0
  // writes; nobody goes on before the write is done.
  if (c->local_replica_id() == 0) apply(v);
  c->barrier();
}

void CentralVariable::apply_update(const VariableUpdate& update, UpdateBatch& batch) {
  ReplicaContext* c = current_replica_context();
  if (c != nullptr && c->num_replicas_in_sync() > 1) {
    // Every replica has finished reading the central copy (its backward pass) before anyone
    // writes it, and the write is complete before any replica reads it again.
    batch.synchronize_with([c] { c->barrier(); });
    if (c->local_replica_id() != 0) return;
  }
  central_->apply_update(update, batch);
}

void CentralVariable::assign(const Tensor& value) { update(value, Update::kAssign, "assign"); }
void CentralVariable::assign_add(const Tensor& delta) { update(delta, Update::kAdd, "assign_add"); }
void CentralVariable::assign_sub(const Tensor& delta) { update(delta, Update::kSub, "assign_sub"); }

}  // namespace strata::distribute
