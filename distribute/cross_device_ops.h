// How MirroredStrategy combines values across its local devices (tf.distribute.CrossDeviceOps).
//
// On logical CPU devices every choice runs the in-process group (distribute/
// in_process_communicator.h): the replicas meet, one thread reduces in replica order into host
// memory and every replica gets the same bits, which is what ReductionToOneDevice describes and
// what HierarchicalCopyAllReduce's tree amounts to on one memory space. NcclAllReduce arrives with
// the CUDA backend.
#pragma once

#include <memory>
#include <string>

namespace strata::distribute {

class CrossDeviceOps {
 public:
  virtual ~CrossDeviceOps() = default;
  virtual std::string name() const = 0;
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

// NCCL all-reduce across GPUs: a ValueError until the CUDA backend exists.
class NcclAllReduce final : public CrossDeviceOps {
 public:
  explicit NcclAllReduce(int num_packs = 1);
  std::string name() const override { return "NcclAllReduce"; }
};

}  // namespace strata::distribute
