// Communicator: the collectives data-parallel training needs, across the `world_size()`
// participants of one group, each calling them with its own `rank()` — the interface NCCL (GPUs),
// Gloo (CPUs across machines) and the in-process implementation (logical CPU replicas, tests)
// share. As with NCCL, every rank must issue the same collectives in the same order with tensors
// of the same shape and dtype; a rank that never arrives is reported after a timeout rather than
// hanging forever.
//
//   InProcessGroup group(2);                    // two replicas in this process
//   // on replica thread r:
//   auto comm = group.communicator(r);
//   comm->all_reduce(grad, ReduceOp::kSum);     // in place: every rank gets the same sum
//   auto work = comm->all_reduce_async(bucket, ReduceOp::kSum);   // overlaps with the caller
//   ...; work->wait();
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distribute/errors.h"
#include "framework/backend/kernel_params.h"
#include "framework/core/tensor.h"
#include "framework/strategy/collective_work.h"

namespace strata::distribute {

// A collective started asynchronously. wait() blocks until it is done and rethrows its error.
// (The framework's type: the trainer waits on it through a ReplicaContext.)
using Work = CollectiveWork;

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // In place: t becomes op over every rank's t (kSum, kMean, kMax or kMin). Every rank ends
  // with bit-identical values (the reduction runs in rank order, once).
  virtual void all_reduce(Tensor& t, ReduceOp op) = 0;
  // The same, running behind the caller; `t` must stay alive and untouched until wait().
  virtual std::shared_ptr<Work> all_reduce_async(Tensor t, ReduceOp op) = 0;
  // In place: every rank's t becomes the value of rank `root`'s t.
  virtual void broadcast(Tensor& t, int root) = 0;
  // Every rank's t concatenated along axis 0, in rank order.
  virtual Tensor all_gather(const Tensor& t) = 0;
  // op over every rank's t, then split along axis 0 into world_size() equal parts: rank r gets
  // part r. t.dim(0) must divide by world_size().
  virtual Tensor reduce_scatter(const Tensor& t, ReduceOp op) = 0;
  // Returns once every rank has called it.
  virtual void barrier() = 0;
};

// The communicators of one group, one per rank: what a strategy's replicas share.
// InProcessGroup (logical CPU devices), HostStagedGroup (GPUs without NCCL), NcclGroup (GPUs).
class CommunicatorGroup {
 public:
  virtual ~CommunicatorGroup() = default;
  virtual int world_size() const = 0;
  // Makes every pending and future collective fail at once with a CollectiveError carrying
  // `reason` (a replica failed: the others must not wait for it). Irreversible.
  virtual void abort(const std::string& reason) = 0;
  // Rank `rank`'s communicator (the same object on every call); use it from one thread at a time.
  virtual std::shared_ptr<Communicator> communicator(int rank) = 0;
};

// The group a strategy uses on `devices` unless its cross-device ops choose another: the
// in-process group when every device is a (logical) CPU, a host-staged one when some are GPUs.
std::unique_ptr<CommunicatorGroup> make_default_group(const std::vector<Device>& devices);

}  // namespace strata::distribute
