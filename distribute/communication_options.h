// CommunicationOptions: how MultiWorkerMirroredStrategy's workers talk (TensorFlow's
// tf.distribute.experimental.CommunicationOptions, plus the failure-detection times TensorFlow
// keeps in its coordination service config).
//
//   distribute::MultiWorkerMirroredStrategy strategy(
//       nullptr, distribute::CommunicationOptions().timeout_seconds(60).bytes_per_pack(4 << 20));
#pragma once

#include <cstddef>
#include <functional>
#include <utility>

namespace strata::distribute {

// TensorFlow's CommunicationImplementation. kRing: a worker's replicas combine in the process,
// then Gloo over TCP across workers (host copies; any devices). kNccl: every GPU of every worker
// is one rank of a single NCCL communicator (ncclCommInitRank; the unique id travels through the
// coordination service), so gradients go GPU to GPU across machines; ValueError on CPUs or in a
// build without NCCL. kAuto: kNccl where every local device is a GPU and NCCL is there, else
// kRing. Either way the small host-side syncs (initial values, metrics) use Gloo.
enum class CommunicationImplementation { kAuto, kRing, kNccl };

// An elastic job (CommunicationOptions::elastic): TF_CONFIG's chief and worker tasks are slots,
// the most workers the job may have; it runs with whichever slots are up, at least
// min_workers (the chief included). A worker that dies, is cut off or stops heartbeating
// leaves: the others re-form without it at the step it failed in, take over the furthest
// state any of them reached and go on; a process that starts in a free slot (or a restarted
// one) joins at the next step boundary and receives that state. The global batch stays the
// same (split over the new worker count), so each step computes what it would have with every
// worker; keep_per_replica_batch chooses Horovod's way instead. The chief hosts the
// coordination service: its death still ends the job.
class ElasticOptions {
 public:
  // The fewest workers the job trains with; fewer left is the job's error naming the lost
  // task. 0: not elastic (any worker lost ends the job, TensorFlow's behaviour).
  ElasticOptions& min_workers(int v) { min_workers_ = v; return *this; }
  // At start, how long the first min_workers wait for the other slots before training
  // without them (they join later when they come).
  ElasticOptions& start_grace_seconds(double v) { start_grace_seconds_ = v; return *this; }
  // Keep each replica's batch instead of the global batch (Horovod elastic's choice): the
  // input's batches (fit's batch_size, or a Dataset's batches) are then per-replica batches, and
  // each step draws one per replica in sync, so the global batch and the steps per epoch follow
  // the worker count. A step run again by fewer or more workers than it was drawn for draws
  // again (it gives batches back, or takes more). Scale the learning rate in on_replicas_changed.
  ElasticOptions& keep_per_replica_batch(bool v) { keep_per_replica_batch_ = v; return *this; }
  // Called on every worker with the replicas now in sync (every worker's together), after each
  // synchronization that changed them and after the first one (a joiner's included), before
  // the next step runs: set the learning rate for the new global batch there (Horovod's reset
  // callbacks), e.g. optimizer->set_learning_rate(base * replicas).
  ElasticOptions& on_replicas_changed(std::function<void(int replicas)> hook) {
    on_replicas_changed_ = std::move(hook);
    return *this;
  }

  int min_workers_ = 0;
  double start_grace_seconds_ = 10;
  bool keep_per_replica_batch_ = false;
  std::function<void(int replicas)> on_replicas_changed_;
};

class CommunicationOptions {
 public:
  CommunicationOptions& implementation(CommunicationImplementation v) { implementation_ = v; return *this; }
  // Gradient bucket size (all-reduced as soon as full, during the backward pass); 0: 25 MB.
  CommunicationOptions& bytes_per_pack(size_t v) { bytes_per_pack_ = v; return *this; }
  // How long any collective may wait for the other workers before it fails naming them
  // (TensorFlow's default is no timeout; a wait that never ends is what Strata refuses).
  CommunicationOptions& timeout_seconds(double v) { timeout_seconds_ = v; return *this; }
  // A worker silent this long is declared dead and every other worker stops with its name.
  CommunicationOptions& heartbeat_timeout_seconds(double v) { heartbeat_timeout_seconds_ = v; return *this; }
  // How long the first worker to start waits for the others to come up.
  CommunicationOptions& register_timeout_seconds(double v) { register_timeout_seconds_ = v; return *this; }
  // Goes on when workers leave or join (ElasticOptions); CPUs and Gloo only for now.
  CommunicationOptions& elastic(ElasticOptions v) { elastic_ = v; return *this; }

  CommunicationImplementation implementation_ = CommunicationImplementation::kAuto;
  size_t bytes_per_pack_ = 0;
  double timeout_seconds_ = 300;
  double heartbeat_timeout_seconds_ = 10;
  double register_timeout_seconds_ = 300;
  ElasticOptions elastic_;
};

}  // namespace strata::distribute
