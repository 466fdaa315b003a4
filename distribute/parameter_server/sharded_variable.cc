#include "distribute/parameter_server/sharded_variable.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "distribute/parameter_server/wire/remote_variable.h"
#include "framework/autograd/grad_mode.h"
#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/core/error.h"
#include "framework/mixed_precision/autocast.h"
#include "framework/ops/creation.h"
#include "framework/ops/shape_ops.h"

namespace strata::distribute {
namespace {

Shape rest_of(const Shape& s, int64_t rows) {
  std::vector<int64_t> dims = s.dims();
  dims[0] = rows;
  return Shape(std::move(dims));
}

Tensor int64_ids(const std::vector<int64_t>& v, Device device) {
  return Tensor::from_vector(v, Shape{int64_t(v.size())}).to(device);
}

// The full initial value, evaluated once, as Variable's constructor would.
Tensor full_initial_value(const VariableSpec& spec) {
  if (spec.initial_value.defined()) return spec.initial_value;
  if (spec.initializer) return spec.initializer(spec.shape, spec.dtype);
  return zeros(spec.shape, spec.dtype, spec.device);
}

}  // namespace

ShardedVariable::ShardedVariable(const VariableSpec& logical_spec, std::vector<VariablePtr> shards)
    : Variable(logical_spec, NoStorage{}),
      shards_(std::move(shards)),
      leaf_(std::make_shared<autograd::Node>(logical_spec.name)) {
  const std::string who = "ShardedVariable '" + name() + "'";
  if (shape_.rank() < 1 || shards_.empty()) {
    throw ValueError(who + ": expected a variable of rank >= 1 and at least one shard, found shape " +
                     shape_.to_string() + " and " + std::to_string(shards_.size()) +
                     " shards; make rank-0 variables unsharded");
  }
  int64_t rows = 0;
  for (size_t i = 0; i < shards_.size(); ++i) {
    const VariablePtr& s = shards_[i];
    if (!s) throw ValueError(who + ": shard " + std::to_string(i) + " is null");
    if (s->shape().rank() != shape_.rank() || rest_of(s->shape(), 0) != rest_of(shape_, 0) ||
        s->shape()[0] < 1) {
      throw ValueError(who + ": shard " + std::to_string(i) + " ('" + s->name() + "') has shape " +
                       s->shape().to_string() + ", expected rows of " + shape_.to_string() +
                       " (shape [k" + (shape_.rank() > 1 ? ", ...]" : "]") +
                       " with k >= 1); make the shards with shard_shapes()");
    }
    if (s->dtype() != dtype_) {
      throw ValueError(who + ": shard " + std::to_string(i) + " ('" + s->name() + "') has dtype " +
                       dtype_name(s->dtype()) + ", expected " + dtype_name(dtype_));
    }
    offsets_.push_back(rows);
    rows += s->shape()[0];
  }
  if (rows != shape_[0]) {
    throw ValueError(who + ": the shards stack to " + std::to_string(rows) + " rows, expected " +
                     std::to_string(shape_[0]) + " (shape " + shape_.to_string() +
                     "); make the shards with shard_shapes()");
  }
}

std::vector<VariablePtr> ShardedVariable::make_shards(
    const VariableSpec& spec, const std::vector<Shape>& shapes, const NextCreator& create_shard,
    const std::vector<const Variable*>& colocate_with) {
  if (!colocate_with.empty() && colocate_with.size() != shapes.size()) {
    throw InternalError("ShardedVariable::make_shards('" + spec.name + "'): " +
                        std::to_string(colocate_with.size()) + " shards to colocate with, expected " +
                        std::to_string(shapes.size()));
  }
  // One evaluation for the whole shape: initializers that depend on the shape (fan-in) or draw
  // random numbers give the same numbers as an unsharded variable.
  Tensor init;
  {
    NoGradGuard no_grad;
    init = full_initial_value(spec).detach();
  }
  if (init.shape() != spec.shape) {
    throw ShapeError("ShardedVariable '" + spec.name + "': initial value has shape " +
                     init.shape().to_string() + ", expected " + spec.shape.to_string());
  }
  std::vector<VariablePtr> shards;
  int64_t row = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int64_t rows = shapes[i].rank() > 0 ? shapes[i][0] : 0;
    if (row + rows > spec.shape[0]) {
      throw ValueError("ShardedVariable '" + spec.name + "': shard shapes exceed the " +
                       std::to_string(spec.shape[0]) + " rows of " + spec.shape.to_string());
    }
    VariableSpec part = spec;
    part.name = spec.name + "/part_" + std::to_string(i);  // TensorFlow's shard names
    part.shape = shapes[i];
    part.initializer = nullptr;
    part.initial_value = init.slice(row, row + rows);
    part.colocate_with = colocate_with.empty() ? nullptr : colocate_with[i];
    // Read raw: the ShardedVariable casts the assembled value once (mixed precision).
    part.autocast = false;
    shards.push_back(create_shard(part));
    row += rows;
  }
  return shards;
}

std::vector<VariablePtr> ShardedVariable::make_shards(const VariableSpec& spec, int64_t num_shards,
                                                      const NextCreator& create_shard) {
  return make_shards(spec, shard_shapes(spec.shape, num_shards), create_shard);
}

Tensor& ShardedVariable::storage() {
  throw InternalError("ShardedVariable '" + name() + "' has no storage of its own: its values "
                      "live in its shards");
}

size_t ShardedVariable::shard_of(int64_t row) const {
  return size_t(std::upper_bound(offsets_.begin(), offsets_.end(), row) - offsets_.begin()) - 1;
}

bool ShardedVariable::tracks_reads() const {
  // Variable::make_read's rule, for the reads assembled here without it (gather).
  return is_floating(dtype_) && ((trainable_ && autograd::should_watch_variables()) ||
                                 (watched_ && autograd::is_recording()));
}

Tensor ShardedVariable::gradient_handle() const {
  // Only its leaf and shape matter (zeros_like for unconnected sources): never-written memory.
  Tensor t = Tensor::empty(shape_, dtype_, device());
  t.set_grad_node(leaf_);
  return t;
}

Tensor ShardedVariable::value() const {
  Tensor full;
  {
    NoGradGuard no_grad;
    std::vector<Tensor> parts;
    for (const VariablePtr& s : shards_) parts.push_back(s->value().detach().to(device()));
    full = parts.size() == 1 ? parts[0].clone() : concat(parts, 0);
  }
  return make_read(full, leaf_);
}

Tensor ShardedVariable::gather(const Tensor& ids) const {
  const std::vector<int64_t> idv = ids.cast(DType::kInt64).to_vector<int64_t>();
  // Each shard is asked once for its distinct touched rows; `where[j]` is id j's row in the
  // concatenation of the shards' answers.
  std::vector<std::vector<int64_t>> local(shards_.size());
  std::vector<std::unordered_map<int64_t, int64_t>> answer_index(shards_.size());  // row -> k
  std::vector<std::pair<size_t, int64_t>> owner(idv.size());  // (shard, index in its answer)
  for (size_t j = 0; j < idv.size(); ++j) {
    const int64_t id = idv[j];
    if (id < 0 || id >= shape_[0]) {
      throw IndexError("ShardedVariable '" + name() + "'.gather: id " + std::to_string(id) +
                       " at position " + std::to_string(j) + " is outside [0, " +
                       std::to_string(shape_[0]) + ")");
    }
    const size_t s = shard_of(id);
    const auto [it, added] = answer_index[s].emplace(id - offsets_[s], int64_t(local[s].size()));
    if (added) local[s].push_back(it->first);
    owner[j] = {s, it->second};
  }
  Tensor out;
  {
    NoGradGuard no_grad;
    std::vector<Tensor> parts;
    // Shards on parameter servers are asked at once (one ReadRows each, all in flight; this
    // thread takes the replies).
    ParallelCalls calls;
    std::vector<std::shared_ptr<Tensor>> remote_rows(shards_.size());
    for (size_t s = 0; s < shards_.size(); ++s) {
      const auto* remote = dynamic_cast<const RemoteVariable*>(shards_[s].get());
      if (remote != nullptr && !local[s].empty()) remote_rows[s] = remote->read_rows_in(calls, local[s]);
    }
    calls.wait();
    std::vector<int64_t> base(shards_.size(), 0);
    int64_t total = 0;
    for (size_t s = 0; s < shards_.size(); ++s) {
      base[s] = total;
      if (local[s].empty()) continue;
      const VariablePtr& shard = shards_[s];
      if (remote_rows[s]) {
        parts.push_back(remote_rows[s]->to(device()));
      } else {
        parts.push_back(shard->gather(int64_ids(local[s], shard->device())).detach().to(device()));
      }
      total += int64_t(local[s].size());
    }
    std::vector<int64_t> where(idv.size());
    for (size_t j = 0; j < idv.size(); ++j) where[j] = base[owner[j].first] + owner[j].second;
    std::vector<int64_t> dims = ids.shape().dims();
    for (int a = 1; a < shape_.rank(); ++a) dims.push_back(shape_[a]);
    if (idv.empty()) {
      out = zeros(Shape(std::move(dims)), dtype_, device());
    } else {
      const Tensor pulled = parts.size() == 1 ? parts[0] : concat(parts, 0);
      out = strata::gather(pulled, int64_ids(where, device()), 0).reshape(Shape(std::move(dims)));
    }
  }
  if (tracks_reads()) {
    // Carries only the leaf: the backward gives this variable its gradient by itself.
    Tensor marker = Tensor::empty(Shape{0}, dtype_, device());
    marker.set_grad_node(leaf_);
    autograd::record(out, "sharded_gather", {marker, ids},
                     [leaf = leaf_.get(), shape = shape_, idx = ids.cast(DType::kInt64).to(device())](
                         const Tensor& g, const autograd::NeedsGrad&) {
                       if (autograd::emit_sparse_gradient(leaf, idx, g, shape)) {
                         return std::vector<Tensor>{Tensor(), Tensor()};
                       }
                       // Dense: rows looked up several times add up.
                       const int64_t n = idx.numel();
                       Tensor grad = zeros(shape, g.dtype(), g.device());
                       backend_for(g).scatter_add(g.reshape(IndexedSlices::rows_shape(shape, n)),
                                                  idx.reshape(Shape{n}), 0, grad);
                       return std::vector<Tensor>{grad, Tensor()};
                     });
  }
  if (autocast_ && is_floating(dtype_)) {
    const std::optional<DType> compute = mixed_precision::autocast_dtype();
    if (compute && is_floating(*compute) && *compute != dtype_) return cast(out, *compute);
  }
  return out;
}

void ShardedVariable::apply_update(const VariableUpdate& update, UpdateBatch& batch) {
  const std::string who = "ShardedVariable '" + name() + "'.apply_update";
  if (update.grad.is_shard()) {
    throw InternalError(who + ": got a gradient shard (a replica's flat range), expected a dense "
                        "or sparse gradient; a ShardedVariable does not accept gradient shards");
  }
  // Slot k's shard i goes with shard i.
  std::vector<const ShardedVariable*> slots;
  for (const VariablePtr& slot : update.slots) {
    const auto* s = dynamic_cast<const ShardedVariable*>(slot.get());
    if (s == nullptr || s->shard_offsets() != offsets_) {
      throw InternalError(who + ": slot '" + (slot ? slot->name() : std::string("null")) +
                          "' is not sharded like the variable (" + std::to_string(num_shards()) +
                          " shards); create slots with colocate_with = the variable through "
                          "create_sharded_variable");
    }
    slots.push_back(s);
  }
  const auto shard_update = [&](size_t i, Gradient grad) {
    VariableUpdate u;
    u.rule = update.rule;
    u.grad = std::move(grad);
    for (const ShardedVariable* s : slots) u.slots.push_back(s->shards()[i]);
    shards_[i]->apply_update(u, batch);
  };
  NoGradGuard no_grad;
  if (!update.grad.is_sparse()) {
    const Tensor g = update.grad.dense();
    for (size_t i = 0; i < shards_.size(); ++i) {
      shard_update(i, Gradient(g.slice(offsets_[i], offsets_[i] + shards_[i]->shape()[0])));
    }
    return;
  }
  // Sparse: each (deduplicated, sorted) row goes to its shard with a shard-local index.
  const IndexedSlices& slices = update.grad.slices();
  const std::vector<int64_t> idx = slices.indices.cast(DType::kInt64).to_vector<int64_t>();
  std::vector<std::vector<int64_t>> local(shards_.size()), pos(shards_.size());
  for (size_t j = 0; j < idx.size(); ++j) {
    if (idx[j] < 0 || idx[j] >= shape_[0]) {
      throw IndexError(who + ": gradient row " + std::to_string(idx[j]) + " is outside [0, " +
                       std::to_string(shape_[0]) + ")");
    }
    const size_t s = shard_of(idx[j]);
    local[s].push_back(idx[j] - offsets_[s]);
    pos[s].push_back(int64_t(j));
  }
  const bool rows_only = updates_touched_rows_only(update.rule);
  for (size_t i = 0; i < shards_.size(); ++i) {
    const Shape& shard_shape = shards_[i]->shape();
    if (local[i].empty()) {
      // Untouched: nothing to do when only touched rows change (SGD, Adagrad); otherwise the
      // shard updates as if with a zero gradient (Adam's moments decay), as the whole would.
      if (rows_only) continue;
      shard_update(i, Gradient(IndexedSlices{
                          Tensor::empty(Shape{0}, DType::kInt64, slices.indices.device()),
                          Tensor::empty(IndexedSlices::rows_shape(shard_shape, 0),
                                        slices.values.dtype(), slices.values.device()),
                          shard_shape}));
      continue;
    }
    Tensor values = local[i].size() == idx.size()
                        ? slices.values
                        : strata::gather(slices.values, int64_ids(pos[i], slices.values.device()), 0);
    shard_update(i, Gradient(IndexedSlices{int64_ids(local[i], slices.indices.device()),
                                           std::move(values), shard_shape}));
  }
}

void ShardedVariable::update_rows(const Tensor& value, Op op, const char* name) {
  check_update(value, name);
  NoGradGuard no_grad;
  const Tensor v = value.detach();
  for (size_t i = 0; i < shards_.size(); ++i) {
    const Tensor rows = v.slice(offsets_[i], offsets_[i] + shards_[i]->shape()[0]);
    switch (op) {
      case Op::kAssign: shards_[i]->assign(rows); break;
      case Op::kAdd: shards_[i]->assign_add(rows); break;
      case Op::kSub: shards_[i]->assign_sub(rows); break;
    }
  }
}

void ShardedVariable::assign(const Tensor& value) { update_rows(value, Op::kAssign, "assign"); }
void ShardedVariable::assign_add(const Tensor& d) { update_rows(d, Op::kAdd, "assign_add"); }
void ShardedVariable::assign_sub(const Tensor& d) { update_rows(d, Op::kSub, "assign_sub"); }

VariablePtr create_sharded_variable(const VariableSpec& spec, const Partitioner& partitioner,
                                    const NextCreator& make_shard) {
  if (const auto* primary = dynamic_cast<const ShardedVariable*>(spec.colocate_with)) {
    std::vector<Shape> shapes;
    std::vector<const Variable*> beside;
    for (const VariablePtr& s : primary->shards()) {
      shapes.push_back(s->shape());
      beside.push_back(s.get());
    }
    if (spec.shape == primary->shape()) {
      return std::make_shared<ShardedVariable>(
          spec, ShardedVariable::make_shards(spec, shapes, make_shard, beside));
    }
    // A slot of another shape (none of Strata's optimizers has one): whole, by the first shard.
    VariableSpec whole = spec;
    whole.colocate_with = beside.front();
    return make_shard(whole);
  }
  if (spec.shape.rank() == 0 || spec.shape[0] < 2) return make_shard(spec);
  const int64_t n = partitioner(spec.shape, spec.dtype, 0)[0];
  if (n <= 1) return make_shard(spec);
  return std::make_shared<ShardedVariable>(
      spec, ShardedVariable::make_shards(spec, shard_shapes(spec.shape, n), make_shard));
}

}  // namespace strata::distribute
