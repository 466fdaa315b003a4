// ShardedVariable (TensorFlow's tf.distribute.experimental ShardedVariable): one logical variable
// of shape [rows, ...] kept as shard variables split along axis 0, the first shards taking the
// remainder rows (shard_shapes in partitioners.h). The shards are reached only through their
// virtual entries (value / gather / apply_update / assign), so they may live elsewhere (on
// parameter servers); this class never touches their storage.
//
//   auto shards = ShardedVariable::make_shards(spec, 3, next);   // "<name>/part_0", ...
//   auto table = std::make_shared<ShardedVariable>(spec, shards);
//   table->gather(ids);   // reads only the touched rows, from the shards that own them
//
// A strategy's creator calls create_sharded_variable(), which also shards an optimizer slot like
// its primary variable (VariableSpec::colocate_with), so shard i's slots sit beside shard i.
#pragma once

#include <memory>
#include <vector>

#include "distribute/parameter_server/partitioners.h"
#include "framework/variables/creator_stack.h"
#include "framework/variables/variable.h"

namespace strata::distribute {

class ShardedVariable final : public Variable {
 public:
  // `shards` stacked along axis 0 must make `logical_spec.shape`, all in its dtype (ValueError
  // otherwise). Only the spec's metadata is used: the shards hold the value.
  ShardedVariable(const VariableSpec& logical_spec, std::vector<VariablePtr> shards);

  // Makes the shards of `spec` with `create_shard`: named "<name>/part_<i>", shaped `shapes`
  // (which must stack to spec.shape), and holding the rows of ONE evaluation of spec's initial
  // value for the full shape, so a sharded variable starts equal to an unsharded one made with
  // the same seed. `colocate_with`, when given, are the shards each new shard goes beside.
  static std::vector<VariablePtr> make_shards(const VariableSpec& spec,
                                              const std::vector<Shape>& shapes,
                                              const NextCreator& create_shard,
                                              const std::vector<const Variable*>& colocate_with = {});
  // The same with shard_shapes(spec.shape, num_shards).
  static std::vector<VariablePtr> make_shards(const VariableSpec& spec, int64_t num_shards,
                                              const NextCreator& create_shard);

  const std::vector<VariablePtr>& shards() const { return shards_; }
  int64_t num_shards() const { return int64_t(shards_.size()); }
  // The logical row where each shard starts.
  const std::vector<int64_t>& shard_offsets() const { return offsets_; }

  Device device() const override { return shards_.front()->device(); }
  // The shards' values concatenated; recorded as this variable's read (dense gradient).
  Tensor value() const override;
  // Only the rows `ids` names, each from the shard that owns it; recorded so that the gradient
  // is this variable's rows (IndexedSlices) under gradient_with_slices, dense otherwise.
  Tensor gather(const Tensor& ids) const override;
  // The gradient split by shard rows, each shard updated with its own slots' shards. A gradient
  // shard (Gradient::shard) is an InternalError: accepts_gradient_shards() is false.
  void apply_update(const VariableUpdate& update, UpdateBatch& batch) override;
  // Split by rows to the shards: a checkpoint loads into any number of shards.
  void assign(const Tensor& value) override;
  void assign_add(const Tensor& delta) override;
  void assign_sub(const Tensor& delta) override;
  Tensor gradient_handle() const override;

 protected:
  // Never reached: every method that would use it is overridden.
  Tensor& storage() override;

 private:
  enum class Op { kAssign, kAdd, kSub };
  void update_rows(const Tensor& value, Op op, const char* name);
  bool tracks_reads() const;
  size_t shard_of(int64_t row) const;  // the shard holding logical row `row` (in range)

  std::vector<VariablePtr> shards_;
  std::vector<int64_t> offsets_;  // offsets_[i]: the logical row where shard i starts
  std::shared_ptr<autograd::Node> leaf_;
};

// For a strategy's variable creator. An optimizer slot whose spec.colocate_with is a
// ShardedVariable of its shape gets the same shard shapes, each shard colocated with the
// primary's. Otherwise `partitioner` decides the shards along axis 0, and a scalar, a variable
// of fewer than 2 rows, or one the partitioner leaves whole is made by `make_shard` unsharded.
VariablePtr create_sharded_variable(const VariableSpec& spec, const Partitioner& partitioner,
                                    const NextCreator& make_shard);

}  // namespace strata::distribute
