// How MirroredStrategy combines values across its local devices (tf.distribute.CrossDeviceOps).
//
// On logical CPU devices ReductionToOneDevice and HierarchicalCopyAllReduce run the in-process
// group (distribute/collectives/in_process_communicator.h): the replicas meet, each reduces its share in
// replica order in host memory and every replica gets the same bits, which is what
// ReductionToOneDevice describes and what HierarchicalCopyAllReduce's tree amounts to on one
// memory space. On GPUs they stage through host memory (distribute/collectives/host_staged_group.h);
// NcclAllReduce (the default on GPUs) all-reduces GPU to GPU with NCCL.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distribute/collectives/communicator.h"

namespace strata::distribute {

class CrossDeviceOps {
 public:
  virtual ~CrossDeviceOps() = default;
  virtual std::string name() const = 0;
  // The communicator group the replicas on `devices` use.
  virtual std::unique_ptr<CommunicatorGroup> make_group(const std::vector<Device>& devices) const {
    return make_default_group(devices);
  }
};

// Reduces on one device (`reduce_to_device`, default the first replica's) and copies back.
class ReductionToOneDevice final : public CrossDeviceOps {
 public:
  explicit ReductionToOneDevice(std::string reduce_to_device = "");
  std::string name() const override { return "ReductionToOneDevice"; }
  const std::string& reduce_to_device() const { return reduce_to_device_; }

 private:
  std::string reduce_to_device_;
};

// TensorFlow's hierarchical copy (for GPUs linked in a ring); num_packs >= 1 as in TensorFlow.
class HierarchicalCopyAllReduce final : public CrossDeviceOps {
 public:
  explicit HierarchicalCopyAllReduce(int num_packs = 1);
  std::string name() const override { return "HierarchicalCopyAllReduce"; }
  int num_packs() const { return num_packs_; }

 private:
  int num_packs_;
};

// NCCL all-reduce across GPUs (one NCCL communicator over the strategy's GPUs). A ValueError in a
// build without NCCL; a strategy with CPU devices rejects it. num_packs >= 1 is accepted as in
// TensorFlow (gradient bucketing plays its part here: framework/strategy/gradient_reducer.h).
class NcclAllReduce final : public CrossDeviceOps {
 public:
  explicit NcclAllReduce(int num_packs = 1);
  std::string name() const override { return "NcclAllReduce"; }
  std::unique_ptr<CommunicatorGroup> make_group(const std::vector<Device>& devices) const override;
};

}  // namespace strata::distribute
