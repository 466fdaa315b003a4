// RemoteVariable: a handle to a variable hosted on one ps task (parameter_service.h), reachable
// only through Variable's virtual entries: value() reads it (one Read RPC), gather() reads only
// the rows asked for (ReadRows of the unique ids), apply_update() pushes the optimizer's update
// (one ApplyUpdate RPC; a sparse gradient stays sparse), and the ps applies it with the same
// Optimizer code as local training; atomic_fetch_add() claims a step of a step count on the ps
// (one FetchAdd RPC), so that workers updating at once never share a step. Inside a RemoteStep
// (remote_step.h: a worker's closure) reads come from the step's prefetch and writes are sent
// together at the step's end, one RPC per ps. Reads are recorded on this handle's own leaf, so
// GradientTape gradients (dense or IndexedSlices) reach it as they reach a local variable.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "distribute/parameter_server/wire/parameter_client.h"
#include "framework/variables/variable.h"

namespace strata::distribute {

class RemoteVariable final : public Variable {
 public:
  // How the handle meets its variable on the ps.
  enum class Origin {
    // Creates it there with its initial value computed here from spec.initializer /
    // spec.initial_value (as a local Variable would be: the same random numbers); a variable
    // already there with the same shape and dtype keeps its value.
    kCreate,
    // It exists (the coordinator made it; a worker rebuilding the model attaches): only the
    // shape and dtype travel, no initial value is computed or sent.
    kAttach,
  };
  // A handle to variable `id` on the ps `client` talks to. CoordinationError when the ps cannot
  // be reached, holds `id` with another shape or dtype, or (kAttach) does not hold it.
  RemoteVariable(const VariableSpec& spec, std::shared_ptr<ParameterClient> client,
                 std::string id, Origin origin = Origin::kCreate);

  // Values arrive in host memory.
  Device device() const override { return Device::cpu(); }
  // The ps task hosting it, e.g. "/job:ps/replica:0/task:0" (TensorFlow's variable.device).
  const std::string& task() const { return client_->task(); }
  const std::string& id() const { return id_; }
  const std::shared_ptr<ParameterClient>& client() const { return client_; }

  Tensor value() const override;
  // Rows `ids` (any shape, int32/int64) of a [rows, dim] variable: only the unique ids travel.
  // Its gradient is IndexedSlices of this variable under gradient_with_slices, else dense.
  Tensor gather(const Tensor& ids) const override;
  // Rows `rows` (valid, distinct) as they are on the ps (one ReadRows); no gradient is recorded.
  // read_rows_in starts it in `calls` (a ShardedVariable asks all its shards together): the rows
  // are in the result after calls.wait().
  Tensor read_rows(const std::vector<int64_t>& rows) const;
  std::shared_ptr<Tensor> read_rows_in(ParallelCalls& calls, const std::vector<int64_t>& rows) const;
  // One ApplyUpdate RPC. The slots must be RemoteVariables on the same ps (a strategy places
  // them by VariableSpec::colocate_with); CoordinationError naming the slot otherwise.
  void apply_update(const VariableUpdate& update, UpdateBatch& batch) override;
  void assign(const Tensor& value) override;
  void assign_add(const Tensor& delta) override;
  void assign_sub(const Tensor& delta) override;
  // One FetchAdd RPC: the ps adds `delta` under the variable's lock and answers the value
  // before (an int64 scalar: an optimizer's step count; DTypeError / ShapeError otherwise).
  std::optional<int64_t> atomic_fetch_add(int64_t delta) override;
  Tensor gradient_handle() const override;

 private:
  // An assignment: queued in the thread's RemoteStep, else one Assign RPC.
  void write(const Tensor& value, AssignMode mode);

  std::shared_ptr<ParameterClient> client_;
  std::string id_;
  std::shared_ptr<autograd::Node> leaf_;   // this handle's node: reads record it
  // gradient_handle()'s tensor, made on first use: only its shape, dtype and node matter (the
  // tape's zeros for an unconnected source), its contents are never read.
  mutable std::mutex handle_mutex_;
  mutable Tensor handle_;
};

}  // namespace strata::distribute
