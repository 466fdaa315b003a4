#include <algorithm>

#include "framework/backend/backend.h"
#include "framework/variables/variable_update.h"

namespace strata {

void UpdateBatch::add(Tensor& value, const OptimizerUpdate& rule, Tensor grad,
                      std::vector<Tensor> slots) {
  // A tensor listed twice gets its updates in list order: apply what is queued first.
  if (queued_.count(&value)) flush();
  queued_.insert(&value);
  auto g = std::find_if(groups_.begin(), groups_.end(), [&](const Group& x) {
    return x.values[0]->device() == value.device() && x.values[0]->dtype() == value.dtype() &&
           x.rule.grad_scale == rule.grad_scale && x.rule.weight_decay == rule.weight_decay;
  });
  if (g == groups_.end()) g = groups_.insert(groups_.end(), Group{rule, {}, {}, {}});
  g->values.push_back(&value);
  g->grads.push_back(std::move(grad));
  g->slots.push_back(std::move(slots));
}

void UpdateBatch::synchronize_with(std::function<void()> sync) {
  if (!sync_) sync_ = std::move(sync);
}

void UpdateBatch::flush() {
  if (sync_ && !synced_before_) {
    synced_before_ = true;
    sync_();
  }
  for (Group& g : groups_) {
    std::vector<std::vector<Tensor>*> slot_ptrs;
    for (std::vector<Tensor>& s : g.slots) slot_ptrs.push_back(&s);
    backend_for(*g.values[0]).optimizer_update_many(g.rule, g.values, g.grads, slot_ptrs);
  }
  groups_.clear();
  queued_.clear();
}

void UpdateBatch::finish() {
  flush();
  if (sync_) sync_();
}

}  // namespace strata
