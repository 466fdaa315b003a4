#include "framework/strategy/strategy.h"

#include <memory>
#include <string>
#include <vector>

#include "framework/core/device_scope.h"
#include "framework/core/error.h"
#include "framework/data/file_sharding.h"
#include "framework/ops/math_ops.h"
#include "framework/strategy/batch_split.h"
#include "framework/strategy/gradient_reducer.h"
#include "framework/strategy/replica_context.h"
#include "framework/trainer/termination_signals.h"

namespace strata::distribute {
namespace {

// The scope active on this thread: at most one strategy (nesting another is an error), entered
// `depth` times, with its variable creator pushed once, and the device cross-replica code runs on
// (see first_replica_device_scope) entered once.
struct ActiveScope {
  Strategy* strategy = nullptr;
  int depth = 0;
  std::unique_ptr<DeviceScope> device;
  std::unique_ptr<VariableCreatorScope> creator;
};

// Code in a strategy's scope but outside its replicas (building a model, reading a variable
// across replicas) reads the first replica's copy of each variable. TensorFlow places such ops
// next to the variables they read; Strata places tensors explicitly, so where the first replica
// has memory of its own (a GPU) and the thread's default device does not share it, the scope
// makes that replica's device the default: a model built inside MirroredStrategy's scope on GPUs
// then builds on /gpu:0, where its variables' first copies are. On CPUs nothing changes.
std::unique_ptr<DeviceScope> first_replica_device_scope(const Strategy& strategy) {
  const std::vector<Device> devices = strategy.worker_devices();
  if (devices.empty() || same_memory_space(devices[0], default_device())) return nullptr;
  return std::make_unique<DeviceScope>(devices[0]);
}
thread_local ActiveScope t_scope;

// No strategy: one replica on the caller's thread and device, plain variables.
class DefaultStrategy final : public Strategy {
 public:
  std::string name() const override { return "DefaultStrategy"; }
  int num_replicas_in_sync() const override { return 1; }
  std::vector<Device> worker_devices() const override { return {default_device()}; }
  void run_replicas(const std::function<void(int)>& fn) override { fn(0); }
  bool is_default() const override { return true; }

  // No splitting: each batch goes whole to the default device (a GPU: through pinned memory,
  // asynchronously); no copy where it shares that device's memory (logical CPU devices).
  std::unique_ptr<DistributedIterator> distribute_input(BatchSource source,
                                                        const InputOptions&) override {
    return std::make_unique<WholeBatchIterator>(std::move(source));
  }

 private:
  class WholeBatchIterator final : public DistributedIterator {
   public:
    explicit WholeBatchIterator(BatchSource source) : source_(std::move(source)) {}
    std::optional<DistributedBatch> next() override {
      std::optional<data::Element> batch = source_();
      if (!batch) return std::nullopt;
      const Device device = default_device();
      data::Element part;
      part.reserve(batch->size());
      for (const Tensor& t : *batch) {
        part.push_back(t.defined() && !same_memory_space(t.device(), device) ? t.to(device) : t);
      }
      DistributedBatch out;
      out.global_size = part.empty() || !part[0].defined() || part[0].rank() == 0 ? 1 : part[0].dim(0);
      out.sizes.push_back(out.global_size);
      out.fractions.push_back(1.0);
      out.per_replica.push_back(std::move(part));
      return out;
    }

   private:
    BatchSource source_;
  };

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator& next) override {
    return next(spec);
  }
};

}  // namespace

Strategy::Strategy() = default;
Strategy::~Strategy() = default;

Strategy::Scope::Scope(Strategy* strategy) : strategy_(strategy) {
  if (t_scope.strategy != nullptr && t_scope.strategy != strategy) {
    throw StateError(strategy->name() + ".scope(): this thread is already inside the scope of a " +
                     "different strategy (" + t_scope.strategy->name() + "); a model and its "
                     "variables belong to one strategy: leave the other scope first");
  }
  if (t_scope.depth++ == 0) {
    t_scope.strategy = strategy;
    try {
      t_scope.device = first_replica_device_scope(*strategy);
      t_scope.creator = std::make_unique<VariableCreatorScope>(
          [strategy](const VariableSpec& spec, const NextCreator& next) {
            return strategy->create_variable(spec, next);
          });
    } catch (...) {
      t_scope = ActiveScope{};
      throw;
    }
  }
}

Strategy::Scope::Scope(Scope&& other) noexcept : strategy_(other.strategy_) {
  other.strategy_ = nullptr;
}

Strategy::Scope::~Scope() {
  if (strategy_ == nullptr) return;
  if (--t_scope.depth == 0) t_scope = ActiveScope{};
}

Strategy::Scope Strategy::scope() { return Scope(this); }

Strategy* current_strategy() { return t_scope.strategy; }

std::shared_ptr<Strategy> get_strategy() {
  if (Strategy* s = t_scope.strategy) {
    if (auto owned = s->weak_from_this().lock()) return owned;
    // A strategy the caller keeps on the stack: hand out a non-owning pointer.
    return std::shared_ptr<Strategy>(std::shared_ptr<Strategy>(), s);
  }
  static const std::shared_ptr<Strategy> default_strategy = std::make_shared<DefaultStrategy>();
  return default_strategy;
}

bool has_strategy() { return t_scope.strategy != nullptr; }

Strategy::TerminationRequest Strategy::termination_request() const {
  return TerminationRequest{TerminationSignalScope::pending(), ""};
}

InputContext Strategy::input_context() const {
  InputContext context;
  context.num_input_pipelines = num_workers();
  context.input_pipeline_id = worker_index();
  context.num_replicas_in_sync = num_replicas_in_sync();
  return context;
}

PerReplica Strategy::run(const std::function<Tensor()>& fn) {
  PerReplica out;
  out.values.resize(size_t(num_local_replicas()));
  const int n = num_replicas_in_sync();
  run_replicas([&](int r) {
    // No batch to measure: each replica is taken to hold an equal share (TensorFlow's
    // compute_average_loss without a global batch size).
    if (ReplicaContext* c = current_replica_context()) c->set_batch_fraction(1.0 / n);
    out.values[size_t(r)] = fn();
  });
  return out;
}

PerReplica Strategy::run_step(const std::function<Tensor(const data::Element&)>& fn,
                              const DistributedBatch& batch) {
  const int n = num_local_replicas();
  if (int(batch.per_replica.size()) != n) {
    throw ValueError(name() + ".run: the distributed batch has " +
                     std::to_string(batch.per_replica.size()) + " parts for " + std::to_string(n) +
                     " local replicas; make it with this strategy's experimental_distribute_dataset");
  }
  PerReplica out;
  out.values.resize(size_t(n));
  run_replicas([&](int r) {
    if (ReplicaContext* c = current_replica_context()) c->set_batch_fraction(batch.fractions[size_t(r)]);
    out.values[size_t(r)] = fn(batch.per_replica[size_t(r)]);
  });
  return out;
}

Tensor Strategy::reduce(ReduceOp op, const PerReplica& value, std::optional<int> axis) const {
  if (op != ReduceOp::kSum && op != ReduceOp::kMean) {
    throw ValueError(name() + ".reduce: only ReduceOp::kSum and ReduceOp::kMean are supported");
  }
  if (value.values.empty()) throw ValueError(name() + ".reduce: no per-replica values");
  const Device home = value.values[0].device();
  Tensor total;
  double count = 0;
  for (const Tensor& v0 : value.values) {
    if (!v0.defined()) throw ValueError(name() + ".reduce: a replica's value is undefined");
    Tensor v = v0.to(home);
    if (axis) {
      if (*axis < 0 || *axis >= v.rank()) {
        throw ValueError(name() + ".reduce: axis " + std::to_string(*axis) +
                         " is out of range for a value of shape " + v.shape().to_string());
      }
      count += double(v.dim(*axis));
      v = reduce_sum(v, {*axis});
    } else {
      count += 1;
    }
    if (total.defined() && total.shape() != v.shape()) {
      throw ShapeError(name() + ".reduce: replicas' values have different shapes " +
                       total.shape().to_string() + " and " + v.shape().to_string());
    }
    total = total.defined() ? add(total, v) : v;
  }
  if (num_workers() > 1) sum_across_workers(total, count);
  return op == ReduceOp::kMean ? multiply(total, 1.0 / count) : total;
}

Tensor Strategy::gather_outputs(const PerReplica& outputs, const DistributedBatch& batch) {
  return concat_replica_outputs(outputs.values, batch);
}

size_t Strategy::gradient_bucket_bytes() const { return kDefaultGradientBucketBytes; }

Tensor Strategy::reduce(ReduceOp op, const Tensor& value, std::optional<int> axis) const {
  PerReplica one;
  one.values.push_back(value);
  return reduce(op, one, axis);
}

DistributedBatch Strategy::split_batch(const data::Element& batch, int64_t expected_global_size,
                                       const char* who) const {
  return distribute::split_batch(batch, worker_devices(), expected_global_size, who,
                                 input_context());
}

namespace {

// Per-replica batches from one dataset: each group of n consecutive batches is one step.
class GroupingIterator final : public DistributedIterator {
 public:
  GroupingIterator(std::unique_ptr<data::Iterator> it, std::vector<Device> devices, int workers)
      : it_(std::move(it)), devices_(std::move(devices)), workers_(workers) {}
  std::optional<DistributedBatch> next() override {
    DistributedBatch out;
    for (size_t r = 0; r < devices_.size(); ++r) {
      std::optional<data::Element> part = it_->next();
      if (!part) {
        if (r == 0) return std::nullopt;
        // Too few per-replica batches for the last step: stand-ins for the rest.
        data::Element stand_in;
        for (const Tensor& t : out.per_replica[0]) stand_in.push_back(t.slice(0, 1).to(devices_[r]));
        out.per_replica.push_back(std::move(stand_in));
        out.sizes.push_back(0);
        continue;
      }
      if (part->empty() || part->at(0).rank() == 0) {
        throw ValueError("distribute_datasets_from_function: the dataset's elements must be "
                         "batches (tensors with a batch axis); call .batch(per_replica_batch_size)");
      }
      for (Tensor& t : *part) if (t.defined()) t = t.to(devices_[r]);
      out.sizes.push_back(part->at(0).dim(0));
      out.per_replica.push_back(std::move(*part));
    }
    // Every worker's pipeline is taken to yield as much as this one (the global batch is the
    // workers' batches together).
    for (int64_t s : out.sizes) out.global_size += s * workers_;
    for (int64_t s : out.sizes) out.fractions.push_back(double(s) / double(out.global_size));
    return out;
  }

 private:
  std::unique_ptr<data::Iterator> it_;
  std::vector<Device> devices_;
  int workers_;
};

// AutoShardPolicy::kOff and kFile: each worker's batches are its own; the workers compare them
// as they go (Strategy::agree_on_unsharded_batch), so identical data or uneven ends are errors,
// not hangs.
class UnshardedIterator final : public DistributedIterator {
 public:
  UnshardedIterator(Strategy* strategy, BatchSource source, AutoShardPolicy policy, const char* who)
      : strategy_(strategy), source_(std::move(source)), devices_(strategy->worker_devices()),
        policy_(policy), who_(who) {}
  std::optional<DistributedBatch> next() override {
    std::optional<data::Element> batch = source_();
    const int64_t samples = batch && !batch->empty() && (*batch)[0].defined() && (*batch)[0].rank() > 0
                                ? (*batch)[0].dim(0) : 0;
    const int64_t global = strategy_->agree_on_unsharded_batch(
        samples, first_ && batch ? fingerprint(*batch) : 0, first_, policy_);
    first_ = false;
    if (!batch) return std::nullopt;
    DistributedBatch out = split_batch(*batch, devices_, -1, who_);
    out.global_size = global;
    for (size_t r = 0; r < out.sizes.size(); ++r) out.fractions[r] = double(out.sizes[r]) / double(global);
    return out;
  }

 private:
  // FNV-1a over every tensor's bytes: enough to tell whether two workers read the same batch.
  static uint64_t fingerprint(const data::Element& batch) {
    uint64_t h = 1469598103934665603ULL;
    for (const Tensor& t0 : batch) {
      if (!t0.defined()) continue;
      const Tensor t = t0.to(Device::cpu());
      const auto* p = static_cast<const unsigned char*>(t.raw_data());
      for (size_t i = 0; i < t.nbytes(); ++i) h = (h ^ p[i]) * 1099511628211ULL;
    }
    return h;
  }

  Strategy* strategy_;
  BatchSource source_;
  std::vector<Device> devices_;
  AutoShardPolicy policy_;
  const char* who_;
  bool first_ = true;
};

}  // namespace

std::unique_ptr<DistributedIterator> Strategy::distribute_input(BatchSource source,
                                                                const InputOptions& options) {
  if (options.worker_batches && num_workers() > 1) {
    return std::make_unique<UnshardedIterator>(this, std::move(source), AutoShardPolicy::kFile,
                                               options.who);
  }
  return make_splitting_iterator(std::move(source), worker_devices(), options, input_context());
}

const char* auto_shard_policy_name(AutoShardPolicy policy) {
  switch (policy) {
    case AutoShardPolicy::kAuto: return "AutoShardPolicy::kAuto";
    case AutoShardPolicy::kFile: return "AutoShardPolicy::kFile";
    case AutoShardPolicy::kData: return "AutoShardPolicy::kData";
    case AutoShardPolicy::kOff: return "AutoShardPolicy::kOff";
  }
  return "AutoShardPolicy";
}

DistributedDataset Strategy::experimental_distribute_dataset(const data::Dataset& dataset,
                                                             AutoShardPolicy policy) {
  const char* who = "experimental_distribute_dataset";
  // Each worker reads its own files (kFile, and kAuto's choice for a pipeline that reads
  // files), or its own dataset as it is (kOff); its batches are its part of the global batch.
  std::optional<data::Dataset> own;
  if (elastic() && (policy == AutoShardPolicy::kFile || policy == AutoShardPolicy::kOff)) {
    throw ValueError(name() + "." + who + ": " + auto_shard_policy_name(policy) + " gives each "
                     "worker input of its own, but this job is elastic: its workers change, and "
                     "each global batch is split over the workers there are at each step; use "
                     "AutoShardPolicy::kData or kAuto (which divide an elastic job's input by "
                     "data)");
  }
  if (num_workers() > 1 && !elastic() &&
      (policy == AutoShardPolicy::kFile || policy == AutoShardPolicy::kAuto)) {
    own = data::shard_by_file(dataset, num_workers(), worker_index(), name() + "." + who);
    if (!own && policy == AutoShardPolicy::kFile) {
      throw ValueError(name() + "." + who + ": AutoShardPolicy::kFile divides a dataset's files "
                       "among the " + std::to_string(num_workers()) + " workers, but this dataset "
                       "reads no files (it is built from tensors or a generator, or its files "
                       "are not from list_files or TFRecordDataset); use AutoShardPolicy::kData "
                       "or kAuto, which give worker " + std::to_string(worker_index()) +
                       " its part of every global batch");
    }
    if (own) policy = AutoShardPolicy::kFile;
  }
  if (num_workers() > 1 && (policy == AutoShardPolicy::kOff || own)) {
    const data::Dataset ds = own ? *own : dataset;
    return DistributedDataset([this, ds, policy, who]() -> std::unique_ptr<DistributedIterator> {
      std::shared_ptr<data::Iterator> it = ds.make_iterator();
      return std::make_unique<UnshardedIterator>(this, [it] { return it->next(); }, policy, who);
    });
  }
  // The dataset's iterators live as long as the distributed iterator that draws from them.
  return DistributedDataset([this, dataset, who]() -> std::unique_ptr<DistributedIterator> {
    std::shared_ptr<data::Iterator> it = dataset.make_iterator();
    InputOptions options;
    options.who = who;
    return distribute_input([it] { return it->next(); }, options);
  });
}

DistributedDataset Strategy::distribute_datasets_from_function(
    const std::function<data::Dataset(const InputContext&)>& fn) {
  if (!fn) throw ValueError(name() + ".distribute_datasets_from_function: the function is empty");
  if (elastic()) {
    throw ValueError(name() + ".distribute_datasets_from_function: each worker's dataset is made "
                     "once for a fixed worker count, but this job is elastic (its workers "
                     "change); use experimental_distribute_dataset or fit with the global "
                     "batch, which each step splits over the workers there are");
  }
  data::Dataset dataset = fn(input_context());
  std::vector<Device> devices = worker_devices();
  const int workers = num_workers();
  return DistributedDataset([dataset, devices, workers]() -> std::unique_ptr<DistributedIterator> {
    return std::make_unique<GroupingIterator>(dataset.make_iterator(), devices, workers);
  });
}

}  // namespace strata::distribute
