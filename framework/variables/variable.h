// Variable: named, mutable state (weights, optimizer slots, metric totals). Created only through
// create_variable(), which runs the thread-local creator stack (creator_stack.h) so that a
// distribution strategy can substitute its own kind of variable without layers knowing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "framework/core/device_scope.h"
#include "framework/core/tensor.h"
#include "framework/variables/variable_update.h"

namespace strata {

namespace autograd {
class Node;
}

// How replicas' updates of a variable combine (TensorFlow's tf.VariableAggregation).
enum class VariableAggregation : uint8_t { kNone, kSum, kMean, kOnlyFirstReplica };
// When replicas synchronise a variable (tf.VariableSynchronization); metrics use kOnRead.
enum class VariableSynchronization : uint8_t { kAuto, kOnWrite, kOnRead, kNone };

const char* aggregation_name(VariableAggregation a);

// Makes a variable's first value from its shape and dtype (see initializers.h).
using InitializerFn = std::function<Tensor(const Shape& shape, DType dtype)>;

struct VariableSpec {
  std::string name;  // Keras-style path, e.g. "dense/kernel"
  Shape shape;
  DType dtype = DType::kFloat32;
  InitializerFn initializer;  // used when initial_value is undefined; zeros when both are empty
  Tensor initial_value;
  bool trainable = true;
  VariableAggregation aggregation = VariableAggregation::kNone;
  VariableSynchronization synchronization = VariableSynchronization::kAuto;
  Device device = default_device();  // the device scope's (see device_scope.h)
  // Read in the compute dtype inside a mixed-precision layer's call (mixed_precision/autocast.h);
  // off for state that must stay in its own dtype (BatchNormalization's statistics).
  bool autocast = true;
  // The variable this one belongs with (an optimizer slot's primary variable; TensorFlow's
  // colocate_vars_with): a strategy that places variables elsewhere puts this one beside it
  // (the same parameter server, the same shards). Null for independent variables.
  const Variable* colocate_with = nullptr;
};

class Variable {
 public:
  // Plain local variable; use create_variable() rather than this in library and user code.
  explicit Variable(const VariableSpec& spec);
  virtual ~Variable();
  Variable(const Variable&) = delete;
  Variable& operator=(const Variable&) = delete;

  const std::string& name() const { return name_; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  bool trainable() const { return trainable_; }
  void set_trainable(bool trainable) { trainable_ = trainable; }
  VariableAggregation aggregation() const { return aggregation_; }
  VariableSynchronization synchronization() const { return synchronization_; }
  bool autocast() const { return autocast_; }
  virtual Device device() const;
  // True for distributed variables that keep one copy per replica (MirroredStrategy's): each
  // replica updates its own copy. False for plain variables and single central copies.
  virtual bool has_replica_copies() const { return false; }

  // The current value to compute with. While a GradientTape that watches accessed variables is
  // active (or after tape.watch(variable)), reads of a trainable variable are recorded. Inside a
  // mixed-precision layer's call a floating variable with autocast() comes back cast to the
  // layer's compute dtype (a differentiable cast: gradients reach the variable in its dtype).
  virtual Tensor value() const;
  // The value as a new tensor that later assignments do not change.
  Tensor read_value() const;

  // In-place updates; shapes and dtypes must match (ShapeError / DTypeError otherwise).
  virtual void assign(const Tensor& value);
  virtual void assign_add(const Tensor& delta);
  virtual void assign_sub(const Tensor& delta);
  // For a count that several tasks update at once (an optimizer's step count on a parameter
  // server): adds `delta` to this int64 scalar where it is kept, as one atomic step, and returns
  // the value it had (TensorFlow's assign_add, answering the value it replaced). nullopt from
  // variables whose updates one process orders (plain, mirrored, central storage): callers
  // read them, then assign, as they always have.
  virtual std::optional<int64_t> atomic_fetch_add(int64_t delta);

  // Rows of the value along axis 0 (embedding_lookup(value(), ids), differentiable): what
  // Embedding asks of its table, so a variable kept elsewhere (sharded, remote) can serve only
  // the rows a step touches.
  virtual Tensor gather(const Tensor& ids) const;
  // Applies one optimizer step's update (optimizers call this, after clipping and reduction;
  // nothing else does). A plain variable queues a fused in-place update of itself and its slots
  // into `batch`; distributed variables override this to apply it where and by whom they must.
  virtual void apply_update(const VariableUpdate& update, UpdateBatch& batch);
  // Whether, on the current replica, apply_update takes a gradient shard (Gradient::shard):
  // this replica's range of the gradient summed over the replicas, the other ranges being
  // applied by the other replicas, with the variable making every copy whole again before the
  // next step reads it. The trainer then reduce-scatters instead of all-reducing
  // (gradient_reducer.h). False for plain variables: no other replica updates the rest.
  virtual bool accepts_gradient_shards() const { return false; }

  // A tensor carrying this variable's leaf node, for GradientTape::gradient(target, variables).
  virtual Tensor gradient_handle() const;
  // Makes reads recorded even when not trainable or the tape doesn't watch variables.
  void watch() const { watched_ = true; }

 protected:
  // The tensor whose memory holds the value: for this class's and its subclasses' own updates.
  // Nothing outside the variable classes reaches it (optimizers go through apply_update).
  virtual Tensor& storage();
  static Tensor& storage_of(Variable& v) { return v.storage(); }

  // For distributed variables that keep their values in component variables: the metadata of
  // `spec` and no storage of its own (they override every method that reaches the storage).
  struct NoStorage {};
  Variable(const VariableSpec& spec, NoStorage);

  Tensor make_read(const Tensor& storage, const std::shared_ptr<autograd::Node>& leaf) const;
  void check_update(const Tensor& value, const char* op) const;

  std::string name_;
  Shape shape_;
  DType dtype_;
  bool trainable_;
  VariableAggregation aggregation_;
  VariableSynchronization synchronization_;
  bool autocast_;
  mutable bool watched_ = false;

 private:
  Tensor storage_;
  std::shared_ptr<autograd::Node> leaf_;
};

using VariablePtr = std::shared_ptr<Variable>;

}  // namespace strata
