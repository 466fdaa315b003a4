#include "framework/strategy/replica_context.h"

namespace strata::distribute {
namespace {
thread_local ReplicaContext* t_context = nullptr;
}  // namespace

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
