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

}  // namespace strata::distribute
