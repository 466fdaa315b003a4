#include "distribute/collectives/hierarchical_group.h"

#include "distribute/collectives/ordered_ops.h"
#include "framework/backend/backend.h"
#include "framework/core/device_scope.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"

namespace strata::distribute {
namespace {

// Writes `src` over `dst` (same shape and dtype), in place: callers hold aliases of `dst`.
void copy_into(const Tensor& src, Tensor& dst) {
  backend_for(dst).copy_bytes(src.raw_data(), src.device(), dst.raw_data(), dst.device(),
                              dst.nbytes());
}

class HierarchicalCommunicator final : public Communicator {
 public:
  HierarchicalCommunicator(std::shared_ptr<Communicator> local, std::shared_ptr<Communicator> cross)
      : local_(std::move(local)), cross_(std::move(cross)) {}

  int rank() const override { return cross_->rank() * local_->world_size() + local_->rank(); }
  int world_size() const override { return cross_->world_size() * local_->world_size(); }

  // Every collective goes through ops_, in issue order: on the caller's thread once the
  // asynchronous ones issued before it are done.
  void all_reduce(Tensor& t, ReduceOp op) override {
    ops_.run([&] { all_reduce_now(t, op); });
  }

  // On the ops' thread: local, cross-worker and local steps, while the caller goes on.
  std::shared_ptr<Work> all_reduce_async(Tensor t, ReduceOp op) override {
    return ops_.submit([this, t, op]() mutable { all_reduce_now(t, op); }, default_device());
  }

  void broadcast(Tensor& t, int root) override {
    ops_.run([&] { broadcast_now(t, root); });
  }

  Tensor all_gather(const Tensor& t) override {
    Tensor all;
    ops_.run([&] { all = all_gather_now(t); });
    return all;
  }

  Tensor reduce_scatter(const Tensor& t, ReduceOp op) override {
    Tensor sum = t.clone();
    all_reduce(sum, op);
    const int64_t part = t.dim(0) / world_size();
    return sum.slice(rank() * part, (rank() + 1) * part).clone();
  }

  void barrier() override {
    ops_.run([&] {
      local_->barrier();
      if (leads()) cross_->barrier();
      local_->barrier();
    });
  }

 private:
  void all_reduce_now(Tensor& t, ReduceOp op) {
    // A mean is a sum over every replica of every worker, divided once at the end.
    const ReduceOp step = op == ReduceOp::kMean ? ReduceOp::kSum : op;
    local_->all_reduce(t, step);
    if (leads()) across_workers(t, [&](Tensor& host) { cross_->all_reduce(host, step); });
    local_->broadcast(t, 0);
    if (op == ReduceOp::kMean) copy_into(multiply(t, 1.0 / double(world_size())), t);
  }

  void broadcast_now(Tensor& t, int root) {
    const int n = local_->world_size();
    const int root_worker = root / n;
    if (cross_->rank() == root_worker) local_->broadcast(t, root % n);
    if (leads()) across_workers(t, [&](Tensor& host) { cross_->broadcast(host, root_worker); });
    local_->broadcast(t, 0);
  }

  Tensor all_gather_now(const Tensor& t) {
    Tensor local = local_->all_gather(t);  // this worker's replicas, in order
    Shape shape = local.shape();
    shape[0] *= cross_->world_size();
    Tensor all = leads() ? cross_->all_gather(local.to(Device::cpu())).to(t.device())
                         : zeros(shape, t.dtype(), t.device());
    local_->broadcast(all, 0);
    return all;
  }

  bool leads() const { return local_->rank() == 0; }

  // The cross-worker communicator works on host memory (Gloo): a GPU value is staged.
  template <typename Fn>
  void across_workers(Tensor& t, Fn&& fn) {
    if (t.device().type == DeviceType::kCPU) return fn(t);
    Tensor host = t.to(Device::cpu());
    fn(host);
    copy_into(host, t);
  }

  std::shared_ptr<Communicator> local_, cross_;
  OrderedOps ops_;  // last: its thread stops before the communicators go
};

}  // namespace

HierarchicalGroup::HierarchicalGroup(std::unique_ptr<CommunicatorGroup> local,
                                     std::shared_ptr<Communicator> cross,
                                     std::function<void(const std::string&)> abort_cross,
                                     bool on_host)
    : local_(std::move(local)), cross_(std::move(cross)), abort_cross_(std::move(abort_cross)) {
  const int n = local_->world_size();
  for (int l = 0; l < n; ++l) {
    communicators_.push_back(n == 1 && on_host ? cross_
                                               : std::make_shared<HierarchicalCommunicator>(
                                                     local_->communicator(l), cross_));
  }
}

int HierarchicalGroup::world_size() const { return local_->world_size() * cross_->world_size(); }

void HierarchicalGroup::abort(const std::string& reason) {
  local_->abort(reason);
  if (abort_cross_) abort_cross_(reason);
}

std::shared_ptr<Communicator> HierarchicalGroup::communicator(int local_rank) {
  return communicators_.at(size_t(local_rank));
}

}  // namespace strata::distribute
