// ParameterClient: one task's connection to one ps task's ParameterService
// (parameter_service.h). Every call has a deadline (rpc_timeout); keepalive pings see a dead ps
// within seconds. Every failure is a CoordinationError naming the operation, the ps task and
// the fix; a refused request (unknown id, wrong shape) carries the service's message, which
// names the variable and the field.
//
// Thread-safe: calls may run concurrently (one gRPC channel, multiplexed). The *_in calls start
// the RPC in a ParallelCalls and return at once, so that one thread asks every ps at once; the
// results are there after ParallelCalls::wait(), which takes every reply on the caller's thread
// (gRPC's completion queue, driven by that thread: no hand-off from a gRPC thread per reply,
// which on a busy machine cost a scheduler wake-up each). The client must outlive the
// ParallelCalls it started calls in.
//
// gRPC stays behind the pointer: this header includes neither gRPC nor protobuf.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "distribute/parameter_server/parameter_server_options.h"
#include "framework/autograd/indexed_slices.h"
#include "framework/backend/kernel_params.h"
#include "framework/core/tensor.h"

namespace strata::distribute {

namespace parameter_server_pb {
class ReadResponse;
}  // namespace parameter_server_pb

enum class AssignMode : uint8_t { kAssign, kAdd, kSub };

// One assignment and one optimizer update, as write() sends them.
struct PendingAssign {
  std::string id;
  Tensor value;
  AssignMode mode = AssignMode::kAssign;
};
struct PendingPush {
  std::string id;
  std::vector<std::string> slot_ids;
  OptimizerUpdate rule;
  Gradient grad;
};

// Calls to several ps tasks in flight at once, started by ParameterClient's *_in calls from
// one thread, whose replies that thread takes in wait(). Not thread-safe: one thread starts the
// calls and waits.
class ParallelCalls {
 public:
  ParallelCalls();
  // Cancels the calls not waited for (a failure elsewhere) and takes their replies.
  ~ParallelCalls();
  ParallelCalls(const ParallelCalls&) = delete;
  ParallelCalls& operator=(const ParallelCalls&) = delete;

  // Returns when every call started has its reply (each has the client's rpc_timeout); then
  // throws the first failure, in start order (a CoordinationError naming the ps).
  void wait();

 private:
  friend class ParameterClient;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ParameterClient {
 public:
  // `task`: the ps task's name for messages, e.g. "/job:ps/replica:0/task:1"; `address`: where
  // it serves ("host:port"; "localhost" dials the loopback). Connects lazily.
  ParameterClient(std::string task, std::string address, ParameterServerOptions options = {});
  ~ParameterClient();

  // Creates variable `id` with `initial_value` (its shape and dtype). Returns false when it
  // existed with the same shape and dtype (its value is kept: a second worker rebuilding the
  // model); CoordinationError when it exists with another.
  bool create_variable(const std::string& id, const std::string& name,
                       const Tensor& initial_value, bool trainable);
  // Checks that variable `id` exists with `shape` and `dtype` (created by another task) without
  // sending a value; CoordinationError when it is missing or different.
  void attach_variable(const std::string& id, const std::string& name, const Shape& shape,
                       DType dtype);
  // The values of `ids`, in order, in one RPC (CPU tensors).
  std::vector<Tensor> read(const std::vector<std::string>& ids);
  // read(), started in `calls`: the values are in the result after calls.wait().
  std::shared_ptr<std::vector<Tensor>> read_in(ParallelCalls& calls,
                                               const std::vector<std::string>& ids);
  // Rows `indices` of variable `id` along axis 0, in order: [indices.size()] + shape[1:].
  Tensor read_rows(const std::string& id, const std::vector<int64_t>& indices);
  std::shared_ptr<Tensor> read_rows_in(ParallelCalls& calls, const std::string& id,
                                       const std::vector<int64_t>& indices);
  // One optimizer step of variable `id`, applied on the ps with its slots `slot_ids` (hosted
  // there, in Backend::optimizer_update's order). A sparse gradient travels as its rows.
  void apply_update(const std::string& id, const std::vector<std::string>& slot_ids,
                    const OptimizerUpdate& rule, const Gradient& grad);
  // value <- value (kAssign), value + value (kAdd), value - value (kSub).
  void assign(const std::string& id, const Tensor& value, AssignMode mode = AssignMode::kAssign);
  // A step's writes to this ps in one ApplyUpdate RPC: the assignments, then the pushes, each
  // list applied in order on the ps. Nothing is sent when both are empty.
  void write(const std::vector<PendingAssign>& assigns, const std::vector<PendingPush>& pushes);
  void write_in(ParallelCalls& calls, const std::vector<PendingAssign>& assigns,
                const std::vector<PendingPush>& pushes);
  // Adds `delta` to the int64 scalar variable `id` on the ps, atomically, and returns the value
  // it had (the optimizer's step count: each concurrent update claims its own step).
  int64_t fetch_add(const std::string& id, int64_t delta);
  // Ends the ps task's Server::join(): the job is over.
  void shutdown();
  // Returns when the ps answers (within rpc_timeout).
  void ping();
  // Waits up to `timeout` for the ps to come up (a task starting later than this one);
  // CoordinationError naming it after that.
  void wait_until_ready(std::chrono::milliseconds timeout);

  // "/job:ps/replica:0/task:1", and "/job:ps/replica:0/task:1 (host:port)" for messages.
  const std::string& task() const;
  const std::string& address() const;
  std::string describe() const;

  // Serialized request and reply bytes of every call so far (for benchmarks and tests).
  int64_t bytes_sent() const;
  int64_t bytes_received() const;
  // RPCs made so far (each Read, ApplyUpdate, Assign, FetchAdd, ... counts one).
  int64_t calls() const;

  ParameterClient(const ParameterClient&) = delete;
  ParameterClient& operator=(const ParameterClient&) = delete;

 private:
  struct Impl;
  static std::vector<Tensor> values_of(const Impl& impl, const std::vector<std::string>& ids,
                                       const parameter_server_pb::ReadResponse& response);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::distribute
