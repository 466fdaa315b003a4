// Test-only: several "workers" of one job inside one process, each a Strategy with one local
// replica, joined by an in-process communicator as a multi-worker strategy joins processes. Each
// worker runs on its own thread. It proves the seams a multi-worker strategy needs: every
// worker's InputContext, global vs local replica ids, and the loops reaching the strategy only
// through distribute_input / run_step / join.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "distribute/collectives/in_process_communicator.h"
#include "distribute/variables/replicated_variable.h"
#include "framework/strategy/replica_context.h"

namespace strata::testing {

class InProcessWorker final : public distribute::Strategy {
 public:
  InProcessWorker(int worker, int workers, std::shared_ptr<distribute::Communicator> comm)
      : context_(worker, workers, std::move(comm)) {}

  std::string name() const override { return "InProcessWorker"; }
  int num_replicas_in_sync() const override { return context_.num_replicas_in_sync(); }
  std::vector<Device> worker_devices() const override { return {Device::cpu()}; }
  int num_workers() const override { return context_.num_replicas_in_sync(); }
  int worker_index() const override { return context_.replica_id_in_sync_group(); }
  void run_replicas(const std::function<void(int)>& fn) override {
    distribute::ReplicaContextScope in_replica(&context_);
    fn(0);
  }

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator&) override {
    // One local copy; mirrored across the workers through the communicator.
    if (spec.synchronization == VariableSynchronization::kOnRead) {
      return std::make_shared<distribute::SyncOnReadVariable>(spec, worker_devices());
    }
    return std::make_shared<distribute::MirroredVariable>(spec, worker_devices());
  }

 private:
  // Global id = the worker's index (one replica per worker); local id 0.
  class Context final : public distribute::ReplicaContext {
   public:
    Context(int worker, int workers, std::shared_ptr<distribute::Communicator> comm)
        : worker_(worker), workers_(workers), comm_(std::move(comm)) {}
    int replica_id_in_sync_group() const override { return worker_; }
    int num_replicas_in_sync() const override { return workers_; }
    int local_replica_id() const override { return 0; }
    Device device() const override { return Device::cpu(); }
    void all_reduce(Tensor& t, ReduceOp op) override { comm_->all_reduce(t, op); }
    std::shared_ptr<CollectiveWork> all_reduce_async(Tensor t, ReduceOp op) override {
      return comm_->all_reduce_async(std::move(t), op);
    }
    void broadcast(Tensor& t, int root) override { comm_->broadcast(t, root); }
    void barrier() override { comm_->barrier(); }

   private:
    int worker_, workers_;
    std::shared_ptr<distribute::Communicator> comm_;
  };
  Context context_;
};

// `n` workers of one job, joined by one in-process group.
inline std::vector<std::shared_ptr<InProcessWorker>> in_process_workers(int n) {
  auto group = std::make_shared<distribute::InProcessGroup>(n, std::chrono::seconds(60));
  std::vector<std::shared_ptr<InProcessWorker>> workers;
  for (int w = 0; w < n; ++w) {
    workers.push_back(std::make_shared<InProcessWorker>(w, n, group->communicator(w)));
  }
  return workers;
}

}  // namespace strata::testing
