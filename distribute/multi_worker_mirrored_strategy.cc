#include "distribute/multi_worker_mirrored_strategy.h"

#include <algorithm>
#include <chrono>

#include "distribute/cluster/resolvers/tfconfig_cluster_resolver.h"
#include "distribute/collectives/hierarchical_group.h"
#include "distribute/collectives/nccl_support.h"
#include "distribute/collectives/rows_in_a_sum.h"
#include "distribute/cross_device_ops.h"
#include "distribute/multi_worker_mirrored_elastic.h"
#include "distribute/variables/replicated_variable.h"
#include "distribute/worker_cluster.h"
#include "framework/autograd/grad_mode.h"
#include "framework/core/random.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"
#include "framework/strategy/batch_split.h"
#include "framework/strategy/gradient_reducer.h"
#include "framework/trainer/termination_signals.h"

namespace strata::distribute {
namespace {

constexpr const char* kWho = "MultiWorkerMirroredStrategy";

void check_options(const CommunicationOptions& o) {
  auto positive = [](double v, const char* what) {
    if (!(v > 0)) {
      throw ValueError(std::string(kWho) + ": CommunicationOptions." + what + " must be > 0 " +
                       "seconds, got " + std::to_string(v));
    }
  };
  positive(o.timeout_seconds_, "timeout_seconds");
  positive(o.heartbeat_timeout_seconds_, "heartbeat_timeout_seconds");
  positive(o.register_timeout_seconds_, "register_timeout_seconds");
  if (o.elastic_.min_workers_ < 0 || !(o.elastic_.start_grace_seconds_ >= 0)) {
    throw ValueError(std::string(kWho) + ": ElasticOptions.min_workers must be >= 0 (0: not "
                     "elastic) and start_grace_seconds >= 0, got " +
                     std::to_string(o.elastic_.min_workers_) + " and " +
                     std::to_string(o.elastic_.start_grace_seconds_));
  }
  if (o.elastic_.min_workers_ == 0 &&
      (o.elastic_.keep_per_replica_batch_ || o.elastic_.on_replicas_changed_)) {
    throw ValueError(std::string(kWho) + ": ElasticOptions.keep_per_replica_batch and "
                     "on_replicas_changed apply to an elastic job, but min_workers is 0 (not "
                     "elastic): set min_workers to the fewest workers the job trains with");
  }
  if (o.elastic_.min_workers_ > 0 && o.implementation_ == CommunicationImplementation::kNccl) {
    throw ValueError(std::string(kWho) + ": an elastic job (ElasticOptions.min_workers > 0) "
                     "re-forms its Gloo group when workers change; NCCL communicators are not "
                     "re-formed yet: use CommunicationImplementation::kRing or kAuto");
  }
}

bool all_of_type(const std::vector<Device>& devices, DeviceType type) {
  return std::all_of(devices.begin(), devices.end(),
                     [type](const Device& d) { return d.type == type; });
}

// Whether gradients go over NCCL: kNccl (refused here, before joining the cluster, where it
// cannot be had), kAuto where every local device is a GPU and the build has NCCL, never kRing.
// With several workers that means one NCCL communicator over every worker's GPUs; alone, the
// in-process NcclAllReduce.
bool use_nccl(const CommunicationOptions& o, const std::vector<Device>& devices) {
  switch (o.implementation_) {
    case CommunicationImplementation::kNccl:
      if (!all_of_type(devices, DeviceType::kCUDA)) {
        throw ValueError(std::string(kWho) + ": CommunicationImplementation::kNccl needs GPUs, "
                         "but this worker's replicas are on CPUs; use kRing or kAuto");
      }
      if (!nccl_available()) {
        throw ValueError(std::string(kWho) + ": CommunicationImplementation::kNccl needs NCCL, "
                         "but this build of Strata has none (configure found no CUDA backend or "
                         "no NCCL; see the cmake output); use kRing or kAuto");
      }
      return true;
    case CommunicationImplementation::kRing:
      return false;
    case CommunicationImplementation::kAuto:
      break;
  }
  return all_of_type(devices, DeviceType::kCUDA) && nccl_available();
}

// A group the coordination service's error reports abort (a worker died: the collective this
// worker's GPUs wait in must end), as they abort the Gloo communicator.
class AbortedOnClusterError final : public CommunicatorGroup {
 public:
  AbortedOnClusterError(std::unique_ptr<CommunicatorGroup> group, WorkerCluster* cluster)
      : group_(std::move(group)), cluster_(cluster) {
    CommunicatorGroup* g = group_.get();
    hook_ = cluster_->add_error_hook([g](const std::string& error) { g->abort(error); });
  }
  ~AbortedOnClusterError() override { cluster_->remove_error_hook(hook_); }
  int world_size() const override { return group_->world_size(); }
  void abort(const std::string& reason) override { group_->abort(reason); }
  std::shared_ptr<Communicator> communicator(int rank) override { return group_->communicator(rank); }

 private:
  std::unique_ptr<CommunicatorGroup> group_;
  WorkerCluster* cluster_;
  int hook_ = -1;
};

// `t` flattened to float64 on the host: how values of any numeric dtype travel in one pack.
Tensor packed(const Tensor& t) {
  return reshape(t.to(Device::cpu()).cast(DType::kFloat64), Shape{t.numel()});
}

}  // namespace

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(
    std::shared_ptr<ClusterResolver> cluster_resolver, CommunicationOptions options,
    const std::vector<std::string>& device_names)
    : resolver_(cluster_resolver ? std::move(cluster_resolver)
                                 : std::make_shared<TFConfigClusterResolver>()),
      options_(options) {
  check_options(options_);
  const std::vector<Device> devices = resolve_devices(device_names, kWho);
  // An elastic job's gradients go over Gloo (its groups re-form by generation), GPUs included.
  const bool nccl = options_.elastic_.min_workers_ == 0 && use_nccl(options_, devices);
  cluster_ = WorkerCluster::join(*resolver_, options_, kWho);
  if (cluster_ && cluster_->elastic()) elastic_ = std::make_unique<Elastic>();
  WorkerCluster* cluster = cluster_.get();
  GroupFactory factory;
  if (cluster != nullptr && nccl) {
    // Every GPU of every worker is one rank of one NCCL communicator (local replicas still meet
    // first inside NCCL, over NVLink/PCIe, before the network). Gloo only carries the small
    // host-side syncs (variables' initial values, metrics, outputs).
    const auto timeout = std::chrono::milliseconds(int64_t(options_.timeout_seconds_ * 1000.0));
    auto generation = std::make_shared<int>(0);
    factory = [cluster, timeout, generation](const std::vector<Device>& d)
        -> std::unique_ptr<CommunicatorGroup> {
      CrossProcessNcclOptions o;
      o.generation = (*generation)++;
      o.worker_name = [cluster](int w) { return cluster->task_name(w); };
      // A group remade after a failure (the job is stopping) must not wait for the others.
      o.connect_now = o.generation == 0;
      return std::make_unique<AbortedOnClusterError>(
          make_cross_process_nccl_group(d, cluster->store(), cluster->worker_index(),
                                        cluster->num_workers(), timeout, o),
          cluster);
    };
  } else {
    // This worker's replicas combine in the process first (NCCL only for a worker alone: with
    // others it took the branch above), then local replica 0 with the other workers over Gloo.
    std::shared_ptr<CrossDeviceOps> ops;
    if (nccl) {
      ops = std::make_shared<NcclAllReduce>();
    } else {
      ops = std::make_shared<ReductionToOneDevice>();
    }
    factory = [ops, cluster](const std::vector<Device>& d) -> std::unique_ptr<CommunicatorGroup> {
      std::unique_ptr<CommunicatorGroup> local = ops->make_group(d);
      if (cluster == nullptr) return local;
      return std::make_unique<HierarchicalGroup>(
          std::move(local), cluster->communicator(),
          [cluster](const std::string& reason) { cluster->abort(reason); },
          /*on_host=*/all_of_type(d, DeviceType::kCPU));
    };
  }
  const int n = int(devices.size());
  try {
    replicas_ = std::make_unique<LocalReplicas>(
        this, devices, std::move(factory), ReplicaIds{worker_index() * n, num_workers() * n});
  } catch (const std::exception& e) {
    // The other workers wait for this one in the same set-up (the NCCL communicator).
    if (cluster_) cluster_->report_error(task_name(worker_index()) + " failed: " + e.what());
    throw;
  }
}

MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() {
  replicas_.reset();  // the replica threads stop before the cluster goes
  cluster_.reset();
  elastic_.reset();
}

int MultiWorkerMirroredStrategy::num_workers() const { return cluster_ ? cluster_->num_workers() : 1; }
int MultiWorkerMirroredStrategy::worker_index() const { return cluster_ ? cluster_->worker_index() : 0; }

std::string MultiWorkerMirroredStrategy::task_name(int worker) const {
  return cluster_ ? cluster_->task_name(worker) : "worker 0";
}

size_t MultiWorkerMirroredStrategy::gradient_bucket_bytes() const {
  return options_.bytes_per_pack_ > 0 ? options_.bytes_per_pack_ : kDefaultGradientBucketBytes;
}

void MultiWorkerMirroredStrategy::run_replicas(const std::function<void(int)>& fn) {
  if (elastic_ && !elastic_->in_step) {
    run_elastic_step([&] { run_replicas(fn); });
    return;
  }
  {
    std::lock_guard<std::mutex> lock(folded_mutex_);  // left by a step that failed after its fold
    folded_state_.reset();
    folded_rows_.clear();
  }
  try {
    replicas_->run(fn);
    synchronize_state();
  } catch (const std::exception& e) {
    // The other workers must stop too, and at once: they would wait in the next collective.
    // (An elastic step's failure is judged by run_elastic_step.)
    if (cluster_ && !elastic_) cluster_->report_error(task_name(worker_index()) + " failed: " + e.what());
    throw;
  }
}

VariablePtr MultiWorkerMirroredStrategy::create_variable(const VariableSpec& spec,
                                                         const NextCreator&) {
  if (spec.synchronization == VariableSynchronization::kOnRead) {
    auto v = std::make_shared<SyncOnReadVariable>(spec, replicas_->devices());
    if (elastic_) track_for_elastic(v);
    std::lock_guard<std::mutex> lock(state_vars_mutex_);
    sync_on_read_.push_back(v);
    return v;
  }
  auto v = std::make_shared<MirroredVariable>(spec, replicas_->devices());
  if (!cluster_) return v;
  if (elastic_) {
    // Every worker takes the chief's values (or the running job's) at its first
    // synchronization instead: a worker joining a running job makes its variables alone.
    track_for_elastic(v);
  } else {
    // Every worker starts from the chief's value (each drew its own random initial values).
    NoGradGuard no_grad;
    Tensor value = v->components()[0]->value().to(Device::cpu()).clone();
    try {
      cluster_->communicator()->broadcast(value, 0);
    } catch (const std::exception& e) {
      cluster_->report_error(task_name(worker_index()) + " failed: " + e.what());
      throw;
    }
    for (const VariablePtr& c : v->components()) c->assign(value.to(c->device()));
  }
  // An optimizer slot (made beside a trainable variable, VariableSpec::colocate_with) changes
  // only with that variable's all-reduced gradient: identically on every replica of every
  // worker, so its copies never differ and a step-end mean would only move it (for ResNet-20
  // with momentum: 272,762 values a step through the all-gather). It updates its local copy
  // in a replica, as the deferred ones do, and is not averaged.
  const bool slot = spec.colocate_with != nullptr && spec.colocate_with->trainable();
  const bool mean = spec.aggregation == VariableAggregation::kMean && !spec.trainable;
  const bool first = spec.aggregation == VariableAggregation::kOnlyFirstReplica;
  if (mean || first) v->defer_aggregation_to_step_end();
  if ((mean && !slot) || first) {
    std::lock_guard<std::mutex> lock(state_vars_mutex_);
    (mean ? step_end_means_ : step_end_first_replica_).push_back(v);
  }
  return v;
}

// What one exchange of the step's state carries, in the layout every worker shares (the same
// variables, made in the same order): [every metric variable's local sum..., every deferred
// mean's sum of this worker's copies..., the random generator's offset, this worker's pending
// termination signal], float64.
struct MultiWorkerMirroredStrategy::StepStateRow {
  std::vector<std::shared_ptr<SyncOnReadVariable>> vars;
  std::vector<std::shared_ptr<MirroredVariable>> means;
  std::vector<Shape> var_shapes;
  std::vector<double> row;
};

std::shared_ptr<MultiWorkerMirroredStrategy::StepStateRow>
MultiWorkerMirroredStrategy::collect_step_state() {
  auto state = std::make_shared<StepStateRow>();
  {
    std::lock_guard<std::mutex> lock(state_vars_mutex_);
    for (const auto& weak : sync_on_read_) {
      if (auto v = weak.lock()) state->vars.push_back(v);
    }
    for (const auto& weak : step_end_means_) {
      if (auto v = weak.lock()) state->means.push_back(v);
    }
  }
  NoGradGuard no_grad;
  std::vector<Tensor> parts;
  for (const auto& v : state->vars) {
    const Tensor sum = v->local_sum();
    state->var_shapes.push_back(sum.shape());
    parts.push_back(packed(sum));
  }
  for (const auto& v : state->means) {
    Tensor sum = packed(v->components()[0]->value());   // float64: exact for identical copies
    for (size_t c = 1; c < v->components().size(); ++c) sum = add(sum, packed(v->components()[c]->value()));
    parts.push_back(sum);
  }
  // How far this worker's random stream got: in a replica (a fold) its own stream, which
  // reserve_random(0) reads without drawing; after the step the global generator, which the
  // replicas' run moved past every replica's stream.
  const uint64_t offset = reserve_random(0).offset;
  // The signal is read once, here: one that arrives later travels with the next step's
  // exchange, so every worker sees the same flags after the same step (zero extra messages).
  parts.push_back(Tensor::from_vector<double>(
      {double(offset), double(TerminationSignalScope::pending())}));
  // Elastic: the newest membership this worker has heard of, so that all re-form together.
  if (elastic_) parts.push_back(Tensor::from_vector<double>({double(cluster_->generation_seen())}));
  state->row = (parts.size() == 1 ? parts[0] : concat(parts, 0)).to_vector<double>();
  return state;
}

std::optional<Strategy::StepStateFold> MultiWorkerMirroredStrategy::fold_step_state(
    int local_replica) {
  // With several local replicas, replica 0's view of the worker's state is complete only after
  // all of them finish the step: they exchange it on their own then.
  if (!cluster_ || replicas_->size() != 1 || local_replica != 0) return std::nullopt;
  std::shared_ptr<StepStateRow> state = collect_step_state();
  const int workers = num_workers();
  const int64_t width = int64_t(state->row.size());
  // Every worker decides alike (same width, same count). Past this size the slots (3 floats a
  // value per worker, zeros but one's) cost more than the separate all-gather's latency.
  if (width * workers * kFloatsPerRowValue * int64_t(sizeof(float)) > kMaxFoldedStateBytes) {
    return std::nullopt;
  }
  StepStateFold fold;
  fold.payload = rows_in_a_sum_slot(state->row, worker_index(), workers);
  fold.receive = [this, state, workers, width](const Tensor& summed) {
    std::vector<double> rows = rows_from_a_sum(summed, workers, width);
    std::lock_guard<std::mutex> lock(folded_mutex_);
    folded_state_ = state;
    folded_rows_ = std::move(rows);
  };
  return fold;
}

MultiWorkerMirroredStrategy::StateExchangeCounts
MultiWorkerMirroredStrategy::state_exchange_counts() const {
  std::lock_guard<std::mutex> lock(folded_mutex_);
  return exchange_counts_;
}

void MultiWorkerMirroredStrategy::synchronize_state() {
  if (!cluster_) return;
  std::vector<std::shared_ptr<MirroredVariable>> firsts;
  {
    std::lock_guard<std::mutex> lock(state_vars_mutex_);
    for (const auto& weak : step_end_first_replica_) {
      if (auto v = weak.lock()) firsts.push_back(v);
    }
  }
  // This worker's first replica's value, in every copy: no collective.
  for (const auto& v : firsts) {
    NoGradGuard no_grad;
    v->assign(v->components()[0]->value().clone());  // outside replicas: every copy
  }
  // Every worker's row: carried by the step's last gradient all-reduce (fold_step_state), or
  // else one all-gather now. Every worker takes the same branch: the fold depends only on what
  // they share (the step function, the replica count, the state's width).
  std::shared_ptr<StepStateRow> state;
  std::vector<double> values;
  {
    std::lock_guard<std::mutex> lock(folded_mutex_);
    state = std::move(folded_state_);
    values = std::move(folded_rows_);
    folded_state_.reset();
    folded_rows_.clear();
    ++(state ? exchange_counts_.folded : exchange_counts_.separate);
  }
  if (!state) {
    state = collect_step_state();
    const Tensor mine = Tensor::from_vector<double>(state->row, Shape{int64_t(state->row.size())});
    values = cluster_->communicator()->all_gather(mine).to_vector<double>();
  }
  // A state changed after it was folded (not by Model::train_step) is not lost for good: the
  // local copies keep the change, and every worker applies the same rows, so they stay equal.
  apply_step_state(*state, values);
}

void MultiWorkerMirroredStrategy::apply_step_state(const StepStateRow& state,
                                                   const std::vector<double>& values) {
  const int64_t width = int64_t(state.row.size());
  // Metric state: the other workers' sums.
  const int other_copies = (num_workers() - 1) * replicas_->size();
  int64_t at = 0;
  for (size_t i = 0; i < state.vars.size(); ++i) {
    const int64_t n = state.var_shapes[i].numel();
    std::vector<double> others(size_t(n), 0.0);
    for (int w = 0; w < num_workers(); ++w) {
      if (w == worker_index()) continue;
      for (int64_t k = 0; k < n; ++k) others[size_t(k)] += values[size_t(w * width + at + k)];
    }
    state.vars[i]->set_other_workers(
        Tensor::from_vector<double>(others, state.var_shapes[i]), other_copies);
    at += n;
  }
  // The deferred means: every copy of every worker becomes the mean over all replicas.
  const double replicas = double(num_workers() * replicas_->size());
  for (const auto& v : state.means) {
    const int64_t n = v->shape().numel();
    std::vector<double> mean(size_t(n), 0.0);
    for (int w = 0; w < num_workers(); ++w) {
      for (int64_t k = 0; k < n; ++k) mean[size_t(k)] += values[size_t(w * width + at + k)];
    }
    for (double& m : mean) m /= replicas;
    NoGradGuard no_grad;
    v->assign(Tensor::from_vector<double>(mean, v->shape()).cast(v->dtype()));  // every copy
    at += n;
  }
  // The generator: every worker continues from the furthest any replica got, so shuffles and
  // dropout stay in step even after replicas drew different amounts (a final partial batch).
  GeneratorState next = get_generator_state();
  for (int w = 0; w < num_workers(); ++w) {
    next.offset = std::max(next.offset, uint64_t(values[size_t(w * width + at)]));
  }
  set_generator_state(next);
  ++at;
  // Termination: the first worker, in worker order, that has a signal pending (a pending signal
  // stays pending until its fit() ends, so once seen it is seen at every later step too).
  TerminationRequest request;
  for (int w = 0; w < num_workers() && !request; ++w) {
    const double signal = values[size_t(w * width + at)];
    if (signal > 0 && signal < 256) request = TerminationRequest{int(signal), task_name(w)};
  }
  ++at;
  if (elastic_) {
    double newest = 0;
    for (int w = 0; w < num_workers(); ++w) newest = std::max(newest, values[size_t(w * width + at)]);
    if (uint64_t(newest) > cluster_->generation()) elastic_->reform_pending = true;
  }
  std::lock_guard<std::mutex> lock(termination_mutex_);
  termination_ = std::move(request);
}

Strategy::TerminationRequest MultiWorkerMirroredStrategy::termination_request() const {
  if (!cluster_) return Strategy::termination_request();  // a single worker: its own signal
  std::lock_guard<std::mutex> lock(termination_mutex_);
  return termination_;
}

void MultiWorkerMirroredStrategy::sum_across_workers(Tensor& total, double& count) const {
  if (!cluster_) return;
  Tensor pack = concat({packed(total), Tensor::from_vector<double>({count})}, 0);
  cluster_->communicator()->all_reduce(pack, ReduceOp::kSum);
  const int64_t n = total.numel();
  count = pack.slice(n, n + 1).to_vector<double>()[0];
  total = reshape(pack.slice(0, n), total.shape()).cast(total.dtype()).to(total.device());
}

int64_t MultiWorkerMirroredStrategy::agree_on_unsharded_batch(int64_t samples,
                                                              uint64_t fingerprint, bool first,
                                                              AutoShardPolicy policy) {
  if (!cluster_) return samples;
  const Tensor mine = Tensor::from_vector<int64_t>({samples, int64_t(fingerprint)});
  const std::vector<int64_t> all = cluster_->communicator()->all_gather(mine).to_vector<int64_t>();
  const int n = num_workers();
  std::string ended, going;
  int64_t total = 0;
  bool same = true;
  for (int w = 0; w < n; ++w) {
    const int64_t s = all[size_t(2 * w)];
    total += s;
    (s == 0 ? ended : going) += (s == 0 ? ended : going).empty() ? task_name(w) : ", " + task_name(w);
    same = same && s == all[0] && all[size_t(2 * w + 1)] == all[1];
  }
  const bool by_file = policy == AutoShardPolicy::kFile;
  const std::string who = by_file ? "the input, divided among the workers by file "
                                    "(AutoShardPolicy::kFile, or kAuto for a dataset of files),"
                                  : "experimental_distribute_dataset with AutoShardPolicy::kOff";
  if (!ended.empty() && !going.empty()) {
    throw ValueError(who + ": the datasets of " + ended + " ended while those of " + going +
                     " still have batches; every worker must yield the same number of batches " +
                     (by_file ? std::string("(files of equal record counts, or .repeat() with "
                                            "steps_per_epoch), or use AutoShardPolicy::kData")
                              : std::string("(shard evenly, or use .repeat() with steps), or use "
                                            "AutoShardPolicy::kData")));
  }
  if (first && samples > 0 && same) {
    throw ValueError(who + ": every worker's first batch is the same (" + std::to_string(samples) +
                     " samples on each of the " + std::to_string(n) + " workers), so all would "
                     "train on the same data; " +
                     (by_file ? std::string("the files hold the same records: give each file "
                                            "different data, or use AutoShardPolicy::kData")
                              : std::string("shard each worker's dataset "
                                            "(dataset.shard(num_workers, worker_index) from "
                                            "input_context()) or use AutoShardPolicy::kData")));
  }
  return total;
}

Tensor MultiWorkerMirroredStrategy::gather_outputs(const PerReplica& outputs,
                                                   const DistributedBatch& batch) {
  const bool any = std::any_of(batch.sizes.begin(), batch.sizes.end(), [](int64_t s) { return s > 0; });
  Tensor local = any ? concat_replica_outputs(outputs.values, batch) : outputs.values[0].slice(0, 0);
  if (!cluster_) return local;
  // Every worker gets every worker's outputs, in input order (worker w held the w-th part of
  // each global batch); parts differ in size in a final partial batch, so each is padded.
  std::shared_ptr<Communicator> comm = cluster_->communicator();
  Tensor host = local.to(Device::cpu());
  const Tensor rows = comm->all_gather(Tensor::from_vector<int64_t>({host.dim(0)}));
  const std::vector<int64_t> counts = rows.to_vector<int64_t>();
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  Shape padded_shape = host.shape();
  padded_shape[0] = most - host.dim(0);
  Tensor padded = padded_shape[0] == 0
                      ? host
                      : concat({host, zeros(padded_shape, host.dtype(), Device::cpu())}, 0);
  const Tensor all = comm->all_gather(padded);
  std::vector<Tensor> parts;
  for (size_t w = 0; w < counts.size(); ++w) {
    if (counts[w] > 0) parts.push_back(all.slice(int64_t(w) * most, int64_t(w) * most + counts[w]));
  }
  if (parts.empty()) return host;
  return parts.size() == 1 ? parts[0] : concat(parts, 0);
}

}  // namespace strata::distribute
