#include "distribute/parameter_server/wire/remote_variable.h"

#include "distribute/parameter_server/wire/remote_step.h"

#include <algorithm>
#include <unordered_map>

#include "framework/autograd/grad_mode.h"
#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/core/error.h"
#include "framework/mixed_precision/autocast.h"
#include "framework/ops/creation.h"
#include "framework/ops/nn_ops.h"

namespace strata::distribute {

namespace {

// The first value, computed here as a local Variable computes it (the same checks, the same
// draws from the random stream, so a model matches its no-strategy twin), on the host.
Tensor initial_value(const VariableSpec& spec) {
  VariableSpec local = spec;
  local.device = Device::cpu();
  return Variable(local).read_value();
}

}  // namespace

RemoteVariable::RemoteVariable(const VariableSpec& spec, std::shared_ptr<ParameterClient> client,
                               std::string id, Origin origin)
    : Variable(spec, NoStorage{}),
      client_(std::move(client)),
      id_(std::move(id)),
      leaf_(std::make_shared<autograd::Node>(spec.name)) {
  if (!client_) throw ValueError("RemoteVariable '" + spec.name + "': the ParameterClient is null");
  if (origin == Origin::kAttach) {
    client_->attach_variable(id_, name_, shape_, dtype_);
  } else {
    client_->create_variable(id_, name_, initial_value(spec), trainable_);
  }
}

Tensor RemoteVariable::value() const {
  if (RemoteStep* step = RemoteStep::current()) return make_read(step->read(client_, id_), leaf_);
  return make_read(client_->read({id_})[0], leaf_);
}

Tensor RemoteVariable::gather(const Tensor& ids) const {
  if (shape_.rank() != 2) {
    throw ShapeError("RemoteVariable '" + name_ + "'.gather: the variable must be [rows, dim], "
                     "it has shape " + shape_.to_string());
  }
  if (ids.dtype() != DType::kInt32 && ids.dtype() != DType::kInt64) {
    throw DTypeError("RemoteVariable '" + name_ + "'.gather: ids must be int32 or int64, got " +
                     dtype_name(ids.dtype()));
  }
  const std::vector<int64_t> wanted = ids.cast(DType::kInt64).to_vector<int64_t>();
  // Only the unique rows travel; `positions` says which of them each id reads.
  std::vector<int64_t> unique;
  std::unordered_map<int64_t, int64_t> slot;
  std::vector<int64_t> positions(wanted.size());
  for (size_t j = 0; j < wanted.size(); ++j) {
    const int64_t id = wanted[j];
    if (id < 0 || id >= shape_[0]) {
      throw IndexError("RemoteVariable '" + name_ + "'.gather: id " + std::to_string(id) +
                       " at position " + std::to_string(j) + " is outside [0, " +
                       std::to_string(shape_[0]) + ") for a variable of shape " +
                       shape_.to_string());
    }
    auto [it, added] = slot.emplace(id, int64_t(unique.size()));
    if (added) unique.push_back(id);
    positions[j] = it->second;
  }
  const Tensor rows = read_rows(unique);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = embedding_lookup(rows, Tensor::from_vector(positions, ids.shape()));
  }
  // Recorded as make_read would record a read of the whole value, on this handle's leaf.
  const bool track = is_floating(dtype_) &&
                     ((trainable_ && autograd::should_watch_variables()) ||
                      (watched_ && autograd::is_recording()));
  if (track) {
    Tensor marker = Tensor::empty(Shape{}, dtype_);   // carries the leaf; never read
    marker.set_grad_node(leaf_);
    const autograd::Node* leaf = leaf_.get();
    autograd::record(out, "remote_gather", {marker, ids},
                     [leaf, shape = shape_, idx = ids.alias()](const Tensor& g,
                                                               const autograd::NeedsGrad&) {
                       // Under gradient_with_slices: the rows, as IndexedSlices of this table.
                       if (autograd::emit_sparse_gradient(leaf, idx, g, shape)) {
                         return std::vector<Tensor>{Tensor(), Tensor()};
                       }
                       Tensor grad = zeros(shape, g.dtype(), g.device());
                       backend_for(g).scatter_add(g, idx, 0, grad);
                       return std::vector<Tensor>{grad, Tensor()};
                     });
  }
  if (autocast_ && is_floating(dtype_)) {
    const std::optional<DType> compute = mixed_precision::autocast_dtype();
    if (compute && is_floating(*compute) && *compute != dtype_) return out.cast(*compute);
  }
  return out;
}

Tensor RemoteVariable::read_rows(const std::vector<int64_t>& rows) const {
  if (RemoteStep* step = RemoteStep::current()) step->before_direct(client_, id_);
  return client_->read_rows(id_, rows);
}

std::shared_ptr<Tensor> RemoteVariable::read_rows_in(ParallelCalls& calls,
                                                    const std::vector<int64_t>& rows) const {
  if (RemoteStep* step = RemoteStep::current()) step->before_direct(client_, id_);
  return client_->read_rows_in(calls, id_, rows);
}

void RemoteVariable::apply_update(const VariableUpdate& update, UpdateBatch&) {
  std::vector<std::string> slot_ids;
  slot_ids.reserve(update.slots.size());
  for (const VariablePtr& slot : update.slots) {
    const auto* remote = dynamic_cast<const RemoteVariable*>(slot.get());
    if (remote == nullptr || remote->client_->address() != client_->address()) {
      throw ValueError(
          "RemoteVariable '" + name_ + "' on " + client_->describe() + ": its optimizer slot '" +
          slot->name() + "' is " +
          (remote ? "on " + remote->client_->describe() : std::string("not on a parameter server")) +
          "; the ps applies an update with the variable's slots beside it: create slots with "
          "VariableSpec::colocate_with set to their variable and place them on its ps");
    }
    slot_ids.push_back(remote->id_);
  }
  if (RemoteStep* step = RemoteStep::current()) {
    step->queue_push(client_, PendingPush{id_, std::move(slot_ids), update.rule, update.grad});
    return;
  }
  client_->apply_update(id_, slot_ids, update.rule, update.grad);
}

void RemoteVariable::write(const Tensor& value, AssignMode mode) {
  if (RemoteStep* step = RemoteStep::current()) {
    step->queue_assign(client_, id_, value, mode);
  } else {
    client_->assign(id_, value, mode);
  }
}

void RemoteVariable::assign(const Tensor& value) {
  check_update(value, "assign");
  write(value, AssignMode::kAssign);
}

void RemoteVariable::assign_add(const Tensor& delta) {
  check_update(delta, "assign_add");
  write(delta, AssignMode::kAdd);
}

void RemoteVariable::assign_sub(const Tensor& delta) {
  check_update(delta, "assign_sub");
  write(delta, AssignMode::kSub);
}

std::optional<int64_t> RemoteVariable::atomic_fetch_add(int64_t delta) {
  if (dtype_ != DType::kInt64) {
    throw DTypeError("RemoteVariable '" + name_ + "'.atomic_fetch_add: the variable is " +
                     dtype_name(dtype_) + ", expected int64 (a step count)");
  }
  if (shape_.rank() != 0) {
    throw ShapeError("RemoteVariable '" + name_ + "'.atomic_fetch_add: the variable has shape " +
                     shape_.to_string() + ", expected a scalar (a step count)");
  }
  if (RemoteStep* step = RemoteStep::current()) step->before_direct(client_, id_);
  return client_->fetch_add(id_, delta);
}

Tensor RemoteVariable::gradient_handle() const {
  std::lock_guard<std::mutex> lock(handle_mutex_);
  if (!handle_.defined()) handle_ = Tensor::empty(shape_, dtype_);
  Tensor t = handle_.alias();
  t.set_grad_node(leaf_);
  return t;
}

}  // namespace strata::distribute
