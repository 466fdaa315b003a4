#include <algorithm>

#include "framework/backend/backend.h"
#include "framework/core/error.h"
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

void UpdateBatch::add_range(Tensor& value, const OptimizerUpdate& rule, int64_t begin,
                            Tensor grad, std::vector<Tensor> slots, RangeCopies copies) {
  const int64_t end = begin + grad.numel();
  STRATA_CHECK(grad.rank() == 1 && begin >= 0 && end <= value.numel());
  if (begin == end) return;
  if (queued_.count(&value)) flush();
  queued_.insert(&value);
  // Views of the range (a tensor is a view of its storage): the fused kernel updates them in
  // place, so the memory outside the range is neither read nor written.
  const auto range = [&](const Tensor& t) { return t.reshape(Shape{t.numel()}).slice(begin, end); };
  for (Tensor& s : slots) s = range(s);
  for (Tensor& c : copies.value) c = range(c);
  for (std::vector<Tensor>& slot_copies : copies.slots) {
    for (Tensor& c : slot_copies) c = range(c);
  }
  ranges_.push_back(RangeUpdate{rule, range(value), std::move(grad), std::move(slots),
                                std::move(copies)});
}

void UpdateBatch::synchronize_with(std::function<void()> sync) {
  if (!sync_) sync_ = std::move(sync);
}

void UpdateBatch::synchronize_after(std::function<void()> sync) {
  if (!sync_after_) sync_after_ = std::move(sync);
}

void UpdateBatch::apply_range(RangeUpdate& r) {
  Backend& backend = backend_for(r.value);
  const auto copy = [&](const Tensor& from, const Tensor& to) {
    backend_for(to).copy_bytes(from.raw_data(), from.device(), to.raw_data(), to.device(),
                               from.nbytes());
  };
  // Pieces small enough to stay in the core's cache between the update and the copies.
  const int64_t piece = int64_t(1) << 16;
  for (int64_t lo = 0; lo < r.value.numel(); lo += piece) {
    const int64_t hi = std::min(r.value.numel(), lo + piece);
    Tensor value = r.value.slice(lo, hi);
    std::vector<Tensor> slots;
    for (const Tensor& s : r.slots) slots.push_back(s.slice(lo, hi));
    backend.optimizer_update(r.rule, value, r.grad.slice(lo, hi), slots);
    for (Tensor& c : r.copies.value) copy(value, c.slice(lo, hi));
    for (size_t k = 0; k < r.copies.slots.size() && k < slots.size(); ++k) {
      for (Tensor& c : r.copies.slots[k]) copy(slots[k], c.slice(lo, hi));
    }
  }
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
  for (RangeUpdate& r : ranges_) apply_range(r);
  ranges_.clear();
  queued_.clear();
}

void UpdateBatch::finish() {
  flush();
  if (sync_) sync_();
  if (sync_after_) sync_after_();
}

}  // namespace strata
