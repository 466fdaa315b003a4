// OneDeviceStrategy (tf.distribute.OneDeviceStrategy): everything on one device. Variables made
// in its scope are placed there, and each step runs there (one replica, so the batch is not
// split). Code written for a strategy runs unchanged on one device.
#pragma once

#include <string>

#include "distribute/local_replicas.h"
#include "framework/strategy/strategy.h"

namespace strata::distribute {

class OneDeviceStrategy final : public Strategy {
 public:
  explicit OneDeviceStrategy(const std::string& device = "/cpu:0");

  std::string name() const override { return "OneDeviceStrategy"; }
  int num_replicas_in_sync() const override { return 1; }
  std::vector<Device> worker_devices() const override { return replicas_.devices(); }
  void run_replicas(const std::function<void(int)>& fn) override { replicas_.run(fn); }

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator& next) override;

 private:
  LocalReplicas replicas_;
};

}  // namespace strata::distribute
