// LocalReplicas: the replicas of a single-process strategy (Mirrored, CentralStorage, OneDevice):
// one per device, replica 0 on the calling thread and the others on threads of their own that
// live as long as the strategy. While a replica runs, its thread has its ReplicaContext (backed by
// a CommunicatorGroup: in-process for CPUs, NCCL or host-staged for GPUs), its device as the default device, an even share of the intra-op threads,
// its own random stream, and the strategy's scope.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "distribute/collectives/communicator.h"
#include "framework/core/device.h"
#include "framework/strategy/strategy.h"

namespace strata::distribute {

// Makes the communicator group of a strategy's devices (again after a replica failed).
using GroupFactory =
    std::function<std::unique_ptr<CommunicatorGroup>(const std::vector<Device>&)>;

// Where this process's replicas stand among every replica in sync: a multi-worker strategy's
// worker w with n local replicas holds global ids w * n ... w * n + n - 1 of workers * n.
struct ReplicaIds {
  int first = 0;    // the global id of local replica 0
  int in_sync = 0;  // every worker's replicas together; 0: this process's alone
};

class LocalReplicas {
 public:
  // make_group null: make_default_group (communicator.h). The group's ranks are the local
  // replicas; a multi-worker strategy's group reaches the other workers behind them.
  LocalReplicas(Strategy* owner, std::vector<Device> devices, GroupFactory make_group = nullptr,
                ReplicaIds ids = {});
  ~LocalReplicas();
  LocalReplicas(const LocalReplicas&) = delete;
  LocalReplicas& operator=(const LocalReplicas&) = delete;

  int size() const { return int(devices_.size()); }
  const std::vector<Device>& devices() const { return devices_; }

  // fn(r) on every replica r at once; returns when all are done. When one throws, the others'
  // collectives are aborted (so none waits for it), the group is remade, and the first error is
  // rethrown. Calling it from inside a replica is a StateError (it would wait for itself).
  void run(const std::function<void(int)>& fn);
  // A new group from the factory with the replicas' global ids now `ids` (an elastic job's
  // workers re-formed: the factory reaches the new cross-worker communicator).
  void remake_group(ReplicaIds ids);

 private:
  struct Shared;
  Strategy* owner_;
  std::vector<Device> devices_;
  std::shared_ptr<Shared> shared_;
};

// Parses and checks a strategy's device list: names as "/cpu:1" or "GPU:0"; no duplicates; CPU
// indices within the logical CPU devices (config::set_logical_cpu_devices), GPU indices within
// the visible GPUs. Empty: every GPU when there are any (TensorFlow's MirroredStrategy()), else
// every logical CPU device. `who` names the strategy in errors.
std::vector<Device> resolve_devices(const std::vector<std::string>& names, const char* who);

}  // namespace strata::distribute
