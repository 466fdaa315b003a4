// RemoteStep: one step's traffic with the parameter servers, batched. A worker runs each closure
// inside one (worker_service.cc).
//
// Without it every read of a RemoteVariable is a Read RPC, every assignment an Assign and every
// variable's optimizer update an ApplyUpdate, one after another: about 200 sequential RPCs a
// ResNet-20 step. Inside it:
//   - at the start, the variables the worker's previous step read whole (its RemoteReadPlan) are
//     read in one Read per ps, every ps at once; value() answers from that copy;
//   - assignments (BatchNorm's moving statistics) and optimizer updates are queued per ps and
//     sent by finish() in one ApplyUpdate per ps (assignments first, then updates, each in the
//     order made), every ps at once;
//   - a step still reads its own writes: an assignment updates the step's copy too, and reading
//     a variable whose update is queued first sends its ps's queue (then reads it).
// What a step reads whole is learnt, not declared: an Embedding table read by rows (gather) is
// never read whole, so never prefetched. The optimizer's step count keeps its own FetchAdd RPC:
// the claimed step sets the learning rate before any update is built.
//
// Values are those of the step's start (plus its own writes), as TensorFlow's asynchronous
// parameter-server training reads each variable once per step; other workers' updates made
// meanwhile are seen by the next step.
//
// A step that throws sends nothing it queued (its update is not half applied). Only the thread
// that made the step sees it (current() is per thread); a nested RemoteStep joins the outer one.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "distribute/parameter_server/wire/parameter_client.h"

namespace strata::distribute {

// The variables a worker's step read whole, per ps: what its next step prefetches.
class RemoteReadPlan {
 public:
  struct PsReads {
    std::shared_ptr<ParameterClient> client;
    std::vector<std::string> ids;
  };
  std::vector<PsReads> reads() const;
  void set(std::vector<PsReads> reads);

 private:
  mutable std::mutex mutex_;
  std::vector<PsReads> reads_;
};

class RemoteStep {
 public:
  // Prefetches what `plan` lists (CoordinationError naming the ps when a Read fails) and makes
  // this the thread's current step. A null plan prefetches nothing and learns nothing.
  explicit RemoteStep(std::shared_ptr<RemoteReadPlan> plan);
  // Drops what was not sent (the step failed) and restores the thread's previous state.
  ~RemoteStep();
  // Sends every queued write, one ApplyUpdate per ps, every ps at once (CoordinationError naming
  // a ps that fails), and records what the step read whole in the plan.
  void finish();

  // The thread's current step, or null.
  static RemoteStep* current();

  // For RemoteVariable (remote_variable.cc): variable `id` on `client`.
  // Its value as this step sees it (from the prefetch or one Read, then kept).
  Tensor read(const std::shared_ptr<ParameterClient>& client, const std::string& id);
  // Before an RPC that reads or claims `id` directly (ReadRows, FetchAdd): sends its ps's queue
  // when `id` has a queued write.
  void before_direct(const std::shared_ptr<ParameterClient>& client, const std::string& id);
  void queue_assign(const std::shared_ptr<ParameterClient>& client, const std::string& id,
                    const Tensor& value, AssignMode mode);
  void queue_push(const std::shared_ptr<ParameterClient>& client, PendingPush push);

  RemoteStep(const RemoteStep&) = delete;
  RemoteStep& operator=(const RemoteStep&) = delete;

 private:
  struct Ps;
  Ps& ps(const std::shared_ptr<ParameterClient>& client);
  struct Queue {
    std::vector<PendingAssign> assigns;
    std::vector<PendingPush> pushes;
  };
  // Empties `ps`'s queue, returning what it held.
  static Queue take_queue(Ps& ps);
  // Sends `ps`'s queue (and empties it) and waits for the reply.
  static void send(Ps& ps);

  std::shared_ptr<RemoteReadPlan> plan_;
  std::map<const ParameterClient*, std::unique_ptr<Ps>> ps_;
  RemoteStep* outer_ = nullptr;   // the thread's step before this one (nested: this one is off)
  bool active_ = false;
};

}  // namespace strata::distribute
