#include "framework/variables/variable.h"

#include "framework/autograd/grad_mode.h"
#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/mixed_precision/autocast.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata {

const char* aggregation_name(VariableAggregation a) {
  switch (a) {
    case VariableAggregation::kNone: return "none";
    case VariableAggregation::kSum: return "sum";
    case VariableAggregation::kMean: return "mean";
    case VariableAggregation::kOnlyFirstReplica: return "only_first_replica";
  }
  return "none";
}

namespace {
Tensor initial_tensor(const VariableSpec& spec) {
  check_dims(spec.shape.dims(), "Variable");
  Tensor init;
  if (spec.initial_value.defined()) {
    init = spec.initial_value;
  } else if (spec.initializer) {
    init = spec.initializer(spec.shape, spec.dtype);
  } else {
    init = zeros(spec.shape, spec.dtype, spec.device);
  }
  if (init.shape() != spec.shape) {
    throw ShapeError("Variable '" + spec.name + "': initial value has shape " +
                     init.shape().to_string() + ", expected " + spec.shape.to_string());
  }
  if (init.dtype() != spec.dtype) {
    throw DTypeError("Variable '" + spec.name + "': initial value has dtype " +
                     dtype_name(init.dtype()) + ", expected " + dtype_name(spec.dtype));
  }
  // Own memory: the variable must not alias the caller's tensor.
  return init.to(spec.device).clone();
}
}  // namespace

Variable::Variable(const VariableSpec& spec)
    : name_(spec.name),
      shape_(spec.shape),
      dtype_(spec.dtype),
      trainable_(spec.trainable),
      aggregation_(spec.aggregation),
      synchronization_(spec.synchronization),
      autocast_(spec.autocast),
      storage_(initial_tensor(spec)),
      leaf_(std::make_shared<autograd::Node>(spec.name)) {}

Variable::Variable(const VariableSpec& spec, NoStorage)
    : name_(spec.name),
      shape_(spec.shape),
      dtype_(spec.dtype),
      trainable_(spec.trainable),
      aggregation_(spec.aggregation),
      synchronization_(spec.synchronization),
      autocast_(spec.autocast) {}

Variable::~Variable() = default;

Device Variable::device() const { return storage_.device(); }

Tensor Variable::make_read(const Tensor& storage, const std::shared_ptr<autograd::Node>& leaf) const {
  Tensor t = storage.alias();
  const bool track = is_floating(dtype_) &&
                     ((trainable_ && autograd::should_watch_variables()) ||
                      (watched_ && autograd::is_recording()));
  if (track) t.set_grad_node(leaf);
  // The one place variables become tensors, so the one place mixed precision casts them.
  if (autocast_ && is_floating(dtype_)) {
    const std::optional<DType> compute = mixed_precision::autocast_dtype();
    if (compute && is_floating(*compute) && *compute != dtype_) return cast(t, *compute);
  }
  return t;
}

Tensor Variable::value() const { return make_read(storage_, leaf_); }

Tensor Variable::read_value() const { return value().detach().clone(); }

Tensor& Variable::storage() { return storage_; }

Tensor Variable::gather(const Tensor& ids) const { return embedding_lookup(value(), ids); }

void Variable::apply_update(const VariableUpdate& update, UpdateBatch& batch) {
  // storage() is virtual: a mirrored variable's (and its slots') is the local replica's copy.
  Tensor& dst = storage();
  std::vector<Tensor> slots;
  slots.reserve(update.slots.size());
  for (const std::shared_ptr<Variable>& slot : update.slots) slots.push_back(slot->storage());
  // (A plain variable never accepts shards: to_dense() says so should one arrive.)
  if (update.grad.is_sparse() && updates_touched_rows_only(update.rule)) {
    batch.add_rows(dst, update.rule, update.grad.slices(), std::move(slots));
  } else {
    batch.add(dst, update.rule, update.grad.to_dense().to(dst.device()), std::move(slots));
  }
}

Tensor Variable::gradient_handle() const {
  Tensor t = storage_.alias();
  t.set_grad_node(leaf_);
  return t;
}

void Variable::check_update(const Tensor& value, const char* op) const {
  if (value.shape() != shape_) {
    throw ShapeError(std::string("Variable '") + name_ + "'." + op + ": value has shape " +
                     value.shape().to_string() + ", variable has shape " + shape_.to_string());
  }
  if (value.dtype() != dtype_) {
    throw DTypeError(std::string("Variable '") + name_ + "'." + op + ": value has dtype " +
                     dtype_name(value.dtype()) + ", variable has dtype " + dtype_name(dtype_));
  }
}

void Variable::assign(const Tensor& value) {
  check_update(value, "assign");
  Tensor& dst = storage();
  const Tensor src = value.to(dst.device());
  backend_for(dst).copy_bytes(src.raw_data(), src.device(), dst.raw_data(), dst.device(),
                              dst.nbytes());
}

void Variable::assign_add(const Tensor& delta) {
  check_update(delta, "assign_add");
  NoGradGuard no_grad;
  assign(add(storage().alias(), delta.to(device())));
}

void Variable::assign_sub(const Tensor& delta) {
  check_update(delta, "assign_sub");
  NoGradGuard no_grad;
  assign(subtract(storage().alias(), delta.to(device())));
}

std::optional<int64_t> Variable::atomic_fetch_add(int64_t) { return std::nullopt; }

}  // namespace strata
