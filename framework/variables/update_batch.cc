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

bool updates_touched_rows_only(const OptimizerUpdate& rule) {
  return (rule.kind == OptimizerKind::kSGD || rule.kind == OptimizerKind::kAdagrad) &&
         rule.weight_decay == 0.0f;
}

void UpdateBatch::add_rows(Tensor& value, const OptimizerUpdate& rule, IndexedSlices grad,
                           std::vector<Tensor> slots) {
  if (queued_.count(&value)) flush();
  queued_.insert(&value);
  rows_.push_back(RowsUpdate{rule, &value, std::move(grad), std::move(slots)});
}

namespace {

// `t`'s rows at `indices` as a new tensor.
Tensor gather_rows(const Tensor& t, const Tensor& indices) {
  Tensor rows = Tensor::empty(IndexedSlices::rows_shape(t.shape(), indices.numel()), t.dtype(),
                              t.device());
  backend_for(t).gather(t, indices, 0, rows);
  return rows;
}

}  // namespace

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
  for (RowsUpdate& r : rows_) {
    // The same kernel as a dense update, on the touched rows of the variable and its slots.
    const Tensor indices = r.grad.indices.to(r.value->device());
    Tensor rows = gather_rows(*r.value, indices);
    std::vector<Tensor> slot_rows;
    for (const Tensor& s : r.slots) slot_rows.push_back(gather_rows(s, indices));
    Backend& backend = backend_for(*r.value);
    backend.optimizer_update(r.rule, rows, r.grad.values.to(r.value->device()), slot_rows);
    backend.scatter_update(rows, indices, 0, *r.value);
    for (size_t k = 0; k < r.slots.size(); ++k) {
      backend.scatter_update(slot_rows[k], indices, 0, r.slots[k]);
    }
  }
  rows_.clear();
  queued_.clear();
}

void UpdateBatch::finish() {
  flush();
  if (sync_) sync_();
}

}  // namespace strata
