// Model: running steps through the model's distribution strategy. The fit / evaluate / predict
// loops call these instead of train_step / test_step / predict_step directly: without a strategy
// they are plain calls; under one, each global batch is split over the replicas and the step
// runs on every replica at once (strategy.run), each on its slice.
#include <functional>

#include "framework/core/device_scope.h"
#include "framework/model/model.h"
#include "framework/strategy/batch_split.h"
#include "framework/strategy/replica_context.h"
#include "framework/strategy/strategy.h"

namespace strata {
namespace {

distribute::DistributedBatch run_on_replicas(
    distribute::Strategy& strategy, const data::Element& batch, int64_t& global_size,
    const char* who, const std::function<void(int, const data::Element&)>& step) {
  distribute::DistributedBatch split = strategy.split_batch(batch, global_size, who);
  if (global_size == 0) global_size = split.global_size;  // the first batch fixes it
  strategy.run_replicas([&](int r) {
    if (distribute::ReplicaContext* c = distribute::current_replica_context()) {
      c->set_batch_fraction(split.fractions[size_t(r)]);
    }
    step(r, split.per_replica[size_t(r)]);
  });
  return split;
}

// A batch's tensors on `device` (the host's pinned staging makes a GPU copy asynchronous); no
// copy where they share its memory (logical CPU devices).
data::Element on_device(const data::Element& batch, Device device) {
  data::Element out;
  out.reserve(batch.size());
  for (const Tensor& t : batch) {
    out.push_back(t.defined() && !same_memory_space(t.device(), device) ? t.to(device) : t);
  }
  return out;
}

}  // namespace

distribute::Strategy* Model::distribute_strategy() const {
  if (strategy_ == nullptr) return nullptr;
  if (strategy_alive_.expired()) {
    throw StateError("Model '" + name() + "': the distribution strategy whose scope created it "
                     "has been destroyed; keep the strategy alive as long as the model");
  }
  return strategy_;
}

void Model::remember_strategy() {
  distribute::Strategy* active = distribute::current_strategy();
  if (active == nullptr) return;
  if (strategy_ != nullptr && !strategy_alive_.expired() && strategy_ != active) {
    throw StateError("Model '" + name() + "' was created under " + strategy_->name() +
                     " but is being compiled under a different strategy (" + active->name() +
                     "); create and compile a model in the same strategy's scope");
  }
  strategy_ = active;
  strategy_alive_ = active->liveness();
}

void Model::distributed_train_step(const data::Element& batch, int64_t& global_size) {
  distribute::Strategy* strategy = distribute_strategy();
  if (strategy == nullptr) {
    DeviceScope scope(device_);
    return train_step(on_device(batch, device_));
  }
  run_on_replicas(*strategy, batch, global_size, "Model.fit",
                  [this](int, const data::Element& b) { train_step(b); });
}

void Model::distributed_test_step(const data::Element& batch, int64_t& global_size) {
  distribute::Strategy* strategy = distribute_strategy();
  if (strategy == nullptr) {
    DeviceScope scope(device_);
    return test_step(on_device(batch, device_));
  }
  run_on_replicas(*strategy, batch, global_size, "Model.evaluate",
                  [this](int, const data::Element& b) { test_step(b); });
}

Tensor Model::distributed_predict_step(const data::Element& batch, int64_t& global_size) {
  distribute::Strategy* strategy = distribute_strategy();
  if (strategy == nullptr) {
    DeviceScope scope(device_);
    return predict_step(on_device(batch, device_));
  }
  std::vector<Tensor> outputs(size_t(strategy->num_replicas_in_sync()));
  const distribute::DistributedBatch split =
      run_on_replicas(*strategy, batch, global_size, "Model.predict",
                      [&](int r, const data::Element& b) { outputs[size_t(r)] = predict_step(b); });
  return distribute::concat_replica_outputs(outputs, split);
}

}  // namespace strata
