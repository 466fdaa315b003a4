// MirroredStrategy: synchronous data parallelism on the devices of one machine
// (tf.distribute.MirroredStrategy). Every variable made in its scope is a MirroredVariable with
// one copy per device (metric state: a SyncOnReadVariable); each step runs on every device with
// its slice of the global batch, and gradients are summed across devices before one identical
// update per copy.
//
//   config::set_logical_cpu_devices(2);
//   distribute::MirroredStrategy strategy;                 // every logical CPU device
//   distribute::MirroredStrategy two({"/cpu:0", "/cpu:1"}, std::make_shared<distribute::HierarchicalCopyAllReduce>());
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distribute/cross_device_ops.h"
#include "distribute/local_replicas.h"
#include "framework/strategy/strategy.h"

namespace strata::distribute {

class MirroredStrategy final : public Strategy {
 public:
  // devices empty: every visible GPU, or every logical CPU device when there is no GPU
  // (TensorFlow's MirroredStrategy()). cross_device_ops null: NcclAllReduce when the devices
  // are GPUs, ReductionToOneDevice otherwise.
  explicit MirroredStrategy(const std::vector<std::string>& devices = {},
                            std::shared_ptr<CrossDeviceOps> cross_device_ops = nullptr);

 private:
  struct Resolved {};  // devices already checked by resolve_devices
  MirroredStrategy(Resolved, std::vector<Device> devices,
                   std::shared_ptr<CrossDeviceOps> cross_device_ops);

 public:

  std::string name() const override { return "MirroredStrategy"; }
  int num_replicas_in_sync() const override { return replicas_.size(); }
  std::vector<Device> worker_devices() const override { return replicas_.devices(); }
  void run_replicas(const std::function<void(int)>& fn) override { replicas_.run(fn); }
  const CrossDeviceOps& cross_device_ops() const { return *cross_device_ops_; }

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator& next) override;

 private:
  std::shared_ptr<CrossDeviceOps> cross_device_ops_;
  LocalReplicas replicas_;
};

}  // namespace strata::distribute
