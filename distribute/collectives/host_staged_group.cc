#include "distribute/collectives/host_staged_group.h"

#include <algorithm>

#include "framework/backend/backend.h"

namespace strata::distribute {
namespace {

// Writes host tensor `src` over device tensor `dst` (same shape and dtype), in place.
void copy_into(const Tensor& src, Tensor& dst) {
  backend_for(dst).copy_bytes(src.raw_data(), src.device(), dst.raw_data(), dst.device(),
                              dst.nbytes());
}

// A work item that finished before it was returned.
class DoneWork final : public Work {
 public:
  void wait() override {}
  bool done() const override { return true; }
};

class HostStagedCommunicator final : public Communicator {
 public:
  explicit HostStagedCommunicator(std::shared_ptr<Communicator> host) : host_(std::move(host)) {}
  int rank() const override { return host_->rank(); }
  int world_size() const override { return host_->world_size(); }

  void all_reduce(Tensor& t, ReduceOp op) override {
    Tensor host = t.to(Device::cpu()).clone();  // clone: a CPU t must not be reduced twice
    host_->all_reduce(host, op);
    copy_into(host, t);
  }
  std::shared_ptr<Work> all_reduce_async(Tensor t, ReduceOp op) override {
    all_reduce(t, op);
    return std::make_shared<DoneWork>();
  }
  void broadcast(Tensor& t, int root) override {
    Tensor host = t.to(Device::cpu()).clone();
    host_->broadcast(host, root);
    copy_into(host, t);
  }
  Tensor all_gather(const Tensor& t) override {
    return host_->all_gather(t.to(Device::cpu())).to(t.device());
  }
  Tensor reduce_scatter(const Tensor& t, ReduceOp op) override {
    return host_->reduce_scatter(t.to(Device::cpu()), op).to(t.device());
  }
  void barrier() override { host_->barrier(); }

 private:
  std::shared_ptr<Communicator> host_;
};

}  // namespace

HostStagedGroup::HostStagedGroup(int world_size) : host_(world_size) {
  for (int r = 0; r < world_size; ++r) {
    communicators_.push_back(std::make_shared<HostStagedCommunicator>(host_.communicator(r)));
  }
}

std::shared_ptr<Communicator> HostStagedGroup::communicator(int rank) {
  if (rank < 0 || rank >= world_size()) {
    throw ValueError("HostStagedGroup::communicator: rank " + std::to_string(rank) +
                     " is outside [0, " + std::to_string(world_size()) + ")");
  }
  return communicators_[size_t(rank)];
}

std::unique_ptr<CommunicatorGroup> make_default_group(const std::vector<Device>& devices) {
  const bool all_cpu = std::all_of(devices.begin(), devices.end(), [](const Device& d) {
    return d.type == DeviceType::kCPU;
  });
  if (all_cpu) return std::make_unique<InProcessGroup>(int(devices.size()));
  return std::make_unique<HostStagedGroup>(int(devices.size()));
}

}  // namespace strata::distribute
