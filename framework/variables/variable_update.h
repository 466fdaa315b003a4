// What an optimizer hands a variable to apply (Variable::apply_update), and the batch that
// gathers the in-place updates of one optimizer step.
//
// The optimizer decides *what* to apply (the rule with its learning rate, step, clipping scale and
// decay, the gradient, the slots); the variable decides *where and by whom*: a plain variable
// queues a fused in-place update, a mirrored one updates its local copy, a central one is
// updated once for all replicas, a remote one sends the update to where it lives. This is
// TensorFlow's strategy.extended.update / Keras 3's assign-through-the-distribution seam.
#pragma once

#include <functional>
#include <memory>
#include <unordered_set>
#include <vector>

#include "framework/autograd/indexed_slices.h"
#include "framework/backend/kernel_params.h"
#include "framework/core/tensor.h"

namespace strata {

class Variable;

struct VariableUpdate {
  OptimizerUpdate rule;  // kind, hyper-parameters, learning rate, step, clipping, decay
  // The variable's shape and dtype; sparse (deduplicated IndexedSlices) for a table read
  // through gather, so a remote or sharded variable receives only the touched rows; a shard
  // (this replica's range of the flattened gradient) for variables that accept gradient shards.
  Gradient grad;
  // The variable's slots, in the order Backend::optimizer_update documents for rule.kind.
  std::vector<std::shared_ptr<Variable>> slots;
};

// Whether `rule` applied to a sparse gradient updates only the touched rows of the variable and
// its slots (Keras 2's sparse semantics, TensorFlow's ResourceSparseApply* kernels): SGD (with or
// without momentum) and Adagrad, without weight decay. SGD momentum differs from a dense update
// here: an untouched row keeps its momentum and its value. Everything else (Adam, AdamW,
// RMSprop, or any weight decay) updates every row as if the untouched rows had a zero gradient:
// for Adam this is exactly Keras 2's sparse Adam (the moments of every row decay each step).
bool updates_touched_rows_only(const OptimizerUpdate& rule);

// The in-place updates of one optimizer step. Updates sharing device, dtype and
// hyper-parameters go to the backend in one optimizer_update_many call (a GPU does them in a few
// multi-tensor launches instead of one launch each); a tensor queued twice gets its updates in
// order.
class UpdateBatch {
 public:
  UpdateBatch() = default;
  UpdateBatch(const UpdateBatch&) = delete;
  UpdateBatch& operator=(const UpdateBatch&) = delete;

  // Queues value <- rule(value, grad, slots), all updated in place. `value` and `slots` are the
  // tensors holding a variable's memory; `grad` is on value's device.
  void add(Tensor& value, const OptimizerUpdate& rule, Tensor grad, std::vector<Tensor> slots);
  // Queues the update of the rows `grad.indices` (unique) of `value` and of its slots only:
  // those rows are gathered, updated by the same fused kernel, and written back.
  void add_rows(Tensor& value, const OptimizerUpdate& rule, IndexedSlices grad,
                std::vector<Tensor> slots);
  // Queues the update of the flat elements [begin, begin + grad.numel()) of `value` and of its
  // slots only (`grad` rank 1): a replica's range of a reduce-scattered gradient. The updated
  // range is then written into `copies` too (the other replicas' copies, in host memory), piece
  // by piece while it is still in cache: the all-gather of a sharded update.
  struct RangeCopies {
    std::vector<Tensor> value;               // the value's other copies
    std::vector<std::vector<Tensor>> slots;  // slots[k]: slot k's other copies (or none)
  };
  void add_range(Tensor& value, const OptimizerUpdate& rule, int64_t begin, Tensor grad,
                 std::vector<Tensor> slots, RangeCopies copies);
  // Asks for `sync` to run (once) before the first queued update is applied and again after the
  // last: variables shared by several replicas (central storage) are written while every replica
  // waits. Every replica of a step must ask for the same sync.
  void synchronize_with(std::function<void()> sync);
  // Asks for `sync` to run (once) after every update, but not before: no replica may read its
  // copies again until every replica has written its range into them.
  void synchronize_after(std::function<void()> sync);
  // Applies everything queued so far.
  void flush();
  // Applies what is left and runs the closing sync.
  void finish();

 private:
  struct Group {
    OptimizerUpdate rule;
    std::vector<Tensor*> values;
    std::vector<Tensor> grads;
    std::vector<std::vector<Tensor>> slots;
  };
  struct RowsUpdate {
    OptimizerUpdate rule;
    Tensor* value;
    IndexedSlices grad;
    std::vector<Tensor> slots;
  };
  struct RangeUpdate {
    OptimizerUpdate rule;
    Tensor value;  // flat views of the range
    Tensor grad;
    std::vector<Tensor> slots;
    RangeCopies copies;
  };
  void apply_range(RangeUpdate& r);

  std::vector<Group> groups_;
  std::vector<RowsUpdate> rows_;
  std::vector<RangeUpdate> ranges_;
  std::unordered_set<const Tensor*> queued_;
  std::function<void()> sync_;
  bool synced_before_ = false;
  std::function<void()> sync_after_;
};

}  // namespace strata
