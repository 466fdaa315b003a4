#include "distribute/variables/replicated_variable.h"

#include <algorithm>

#include "framework/autograd/grad_mode.h"
#include "framework/core/error.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/strategy/replica_context.h"

namespace strata::distribute {

ReplicatedVariable::ReplicatedVariable(const VariableSpec& spec, const std::vector<Device>& devices)
    : Variable(spec, NoStorage{}) {
  if (devices.empty()) throw ValueError("ReplicatedVariable '" + spec.name + "': no devices");
  VariableSpec first = spec;
  first.device = devices[0];
  copies_.push_back(std::make_shared<Variable>(first));
  const Tensor initial = copies_[0]->read_value();
  for (size_t r = 1; r < devices.size(); ++r) {
    VariableSpec copy = spec;
    copy.device = devices[r];
    copy.initializer = nullptr;
    copy.initial_value = initial;
    copies_.push_back(std::make_shared<Variable>(copy));
  }
}

bool ReplicatedVariable::in_replica() const {
  const ReplicaContext* c = current_replica_context();
  return c != nullptr && c->num_replicas_in_sync() > 1;
}

Variable& ReplicatedVariable::local() const {
  const ReplicaContext* c = current_replica_context();
  if (c == nullptr) return *copies_[0];
  // Copies are this process's: indexed by the local replica id (several workers each hold their
  // own copies of the same variable).
  const int r = c->local_replica_id();
  if (r < 0 || r >= num_copies()) {
    throw StateError("Variable '" + name() + "' has " + std::to_string(num_copies()) +
                     " local replica copies but is used on local replica " + std::to_string(r) +
                     " (of " + std::to_string(c->num_replicas_in_sync()) +
                     " in sync); use a variable under the strategy whose scope created it");
  }
  return *copies_[size_t(r)];
}

Tensor ReplicatedVariable::read(const Variable& c) const {
  Tensor handle = c.gradient_handle();
  return make_read(storage_of(const_cast<Variable&>(c)), handle.grad_node());
}

Tensor MirroredVariable::aggregate(const Tensor& t, const char* op) const {
  ReplicaContext* c = current_replica_context();
  Tensor v = t.to(local().device()).clone();
  if (aggregate_at_step_end_) return v;  // the strategy combines the copies after the step
  switch (aggregation()) {
    case VariableAggregation::kNone: return v;  // the caller combined already (optimizer)
    case VariableAggregation::kSum: c->all_reduce(v, ReduceOp::kSum); return v;
    case VariableAggregation::kMean: c->all_reduce(v, ReduceOp::kMean); return v;
    case VariableAggregation::kOnlyFirstReplica: c->broadcast(v, 0); return v;
  }
  throw StateError(std::string("MirroredVariable.") + op + ": unknown aggregation");
}

void MirroredVariable::assign(const Tensor& value) {
  check_update(value, "assign");
  NoGradGuard no_grad;
  if (in_replica()) return local().assign(aggregate(value, "assign"));
  for (const VariablePtr& c : components()) c->assign(value);
}

void MirroredVariable::assign_add(const Tensor& delta) {
  check_update(delta, "assign_add");
  NoGradGuard no_grad;
  if (in_replica()) return local().assign_add(aggregate(delta, "assign_add"));
  for (const VariablePtr& c : components()) c->assign_add(delta);
}

void MirroredVariable::assign_sub(const Tensor& delta) {
  check_update(delta, "assign_sub");
  NoGradGuard no_grad;
  if (in_replica()) return local().assign_sub(aggregate(delta, "assign_sub"));
  for (const VariablePtr& c : components()) c->assign_sub(delta);
}

bool MirroredVariable::accepts_gradient_shards() const {
  const ReplicaContext* c = current_replica_context();
  if (c == nullptr || c->num_replicas_in_sync() != num_copies()) return false;
  return std::all_of(components().begin(), components().end(), [](const VariablePtr& v) {
    return v->device().type == DeviceType::kCPU;
  });
}

void MirroredVariable::apply_update(const VariableUpdate& update, UpdateBatch& batch) {
  if (!update.grad.is_shard()) return ReplicatedVariable::apply_update(update, batch);
  ReplicaContext* replica = current_replica_context();
  STRATA_CHECK(replica != nullptr && accepts_gradient_shards());
  // This replica's range of the local copy and of its slots' local copies, then written into
  // the other copies (slots are mirrored like their variable when the optimizer was built in the
  // strategy's scope).
  const int from = replica->local_replica_id();
  Tensor& dst = storage_of(*components()[size_t(from)]);
  std::vector<Tensor> slots;
  UpdateBatch::RangeCopies copies;
  for (int c = 0; c < num_copies(); ++c) {
    if (c != from) copies.value.push_back(storage_of(*components()[size_t(c)]));
  }
  for (const VariablePtr& slot : update.slots) {
    slots.push_back(storage_of(*slot));  // (virtual: a mirrored slot's local copy)
    copies.slots.emplace_back();
    if (const auto* r = dynamic_cast<const ReplicatedVariable*>(slot.get())) {
      for (int c = 0; c < r->num_copies(); ++c) {
        if (c != from) copies.slots.back().push_back(storage_of(*r->components()[size_t(c)]));
      }
    }
  }
  batch.add_range(dst, update.rule, update.grad.shard_begin(),
                  update.grad.numbers().to(dst.device()), std::move(slots), std::move(copies));
  // Every replica asks for it, with or without a range of this variable.
  batch.synchronize_after([replica] { replica->barrier(); });
}

Tensor SyncOnReadVariable::local_sum() const {
  const auto& copies = components();
  NoGradGuard no_grad;
  Tensor total = copies[0]->value().clone();
  for (size_t r = 1; r < copies.size(); ++r) total = add(total, copies[r]->value().to(total.device()));
  return total;
}

void SyncOnReadVariable::set_other_workers(const Tensor& sum, int copies) {
  other_workers_sum_ = sum;
  other_workers_copies_ = copies;
}

Tensor SyncOnReadVariable::value() const {
  if (current_replica_context() != nullptr) return read(local());
  // Cross-replica: the combination of every replica's copy, here and (as of the last
  // synchronization) on the other workers.
  const auto& copies = components();
  NoGradGuard no_grad;
  switch (aggregation()) {
    case VariableAggregation::kSum:
    case VariableAggregation::kMean: {
      Tensor total = local_sum();
      double n = double(copies.size());
      if (other_workers_sum_.defined()) {
        total = add(total, other_workers_sum_.to(total.device()).cast(total.dtype()));
        n += other_workers_copies_;
      }
      if (aggregation() == VariableAggregation::kMean && is_floating(dtype())) {
        total = multiply(total, 1.0 / n);
      }
      return total;
    }
    case VariableAggregation::kNone:
    case VariableAggregation::kOnlyFirstReplica:
      return copies[0]->value();
  }
  return copies[0]->value();
}

void SyncOnReadVariable::assign(const Tensor& value) {
  check_update(value, "assign");
  NoGradGuard no_grad;
  if (current_replica_context() != nullptr) return local().assign(value);
  // Cross-replica (reset_state, loading): for a sum, copy 0 holds the value and the others
  // zero, so the combined read gives back exactly `value` (the other workers' part is dropped
  // until the next synchronization: every worker resets its metrics at the same point).
  other_workers_sum_ = Tensor();
  other_workers_copies_ = 0;
  const auto& copies = components();
  for (size_t r = 0; r < copies.size(); ++r) {
    const bool zero = r > 0 && aggregation() == VariableAggregation::kSum;
    copies[r]->assign(zero ? zeros_like(value) : value);
  }
}

void SyncOnReadVariable::assign_add(const Tensor& delta) {
  check_update(delta, "assign_add");
  NoGradGuard no_grad;
  if (current_replica_context() != nullptr) return local().assign_add(delta);
  components()[0]->assign_add(delta);
  if (aggregation() != VariableAggregation::kSum) {
    for (size_t r = 1; r < components().size(); ++r) components()[r]->assign_add(delta);
  }
}

void SyncOnReadVariable::assign_sub(const Tensor& delta) {
  check_update(delta, "assign_sub");
  NoGradGuard no_grad;
  if (current_replica_context() != nullptr) return local().assign_sub(delta);
  components()[0]->assign_sub(delta);
  if (aggregation() != VariableAggregation::kSum) {
    for (size_t r = 1; r < components().size(); ++r) components()[r]->assign_sub(delta);
  }
}

}  // namespace strata::distribute
