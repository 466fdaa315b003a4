// CentralStorageStrategy (tf.distribute.experimental.CentralStorageStrategy): one copy of every
// variable on the parameter device (the CPU), the computation replicated over the compute
// devices, gradients summed onto the central copy and applied there once. Metric state stays
// per replica (SyncOnReadVariable) and is summed when read.
#pragma once

#include <string>
#include <vector>

#include "distribute/local_replicas.h"
#include "framework/strategy/strategy.h"

namespace strata::distribute {

class CentralStorageStrategy final : public Strategy {
 public:
  // compute_devices empty: every logical CPU device; parameter_device empty: /cpu:0.
  explicit CentralStorageStrategy(const std::vector<std::string>& compute_devices = {},
                                  const std::string& parameter_device = "");

  std::string name() const override { return "CentralStorageStrategy"; }
  int num_replicas_in_sync() const override { return replicas_.size(); }
  std::vector<Device> worker_devices() const override { return replicas_.devices(); }
  void run_replicas(const std::function<void(int)>& fn) override { replicas_.run(fn); }
  Device parameter_device() const { return parameter_device_; }

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator& next) override;

 private:
  LocalReplicas replicas_;
  Device parameter_device_;
};

}  // namespace strata::distribute
