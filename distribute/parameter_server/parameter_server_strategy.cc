#include "distribute/parameter_server/parameter_server_strategy.h"

#include <iostream>
#include <optional>

#include "distribute/errors.h"
#include "distribute/parameter_server/ps_roles.h"
#include "distribute/parameter_server/ps_trainer.h"
#include "distribute/parameter_server/sharded_variable.h"
#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/remote_variable.h"
#include "distribute/parameter_server/wire/worker_client.h"
#include "framework/config/json.h"
#include "framework/strategy/batch_split.h"

namespace strata::distribute {
namespace {

// The resolver's cluster once it passes TensorFlow's checks (ps_roles.h).
ClusterSpec verified_cluster(const ClusterResolver& resolver) {
  validate_parameter_server_cluster(resolver);
  return resolver.cluster_spec();
}

}  // namespace

std::string job_task_name(const std::string& job, int index) {
  return "/job:" + job + "/replica:0/task:" + std::to_string(index);
}

ParameterServerStrategy::ParameterServerStrategy(
    const ClusterResolver& cluster_resolver,
    std::shared_ptr<const Partitioner> variable_partitioner, ParameterServerOptions options)
    : ParameterServerStrategy(verified_cluster(cluster_resolver), std::move(variable_partitioner),
                              options) {}

ParameterServerStrategy::ParameterServerStrategy(
    const ClusterSpec& cluster, std::shared_ptr<const Partitioner> variable_partitioner,
    ParameterServerOptions options)
    : cluster_(cluster), partitioner_(std::move(variable_partitioner)), options_(options) {
  for (const char* job : {"ps", "worker"}) {
    if (!cluster_.has_job(job) || cluster_.num_tasks(job) == 0) {
      throw ValueError(std::string("ParameterServerStrategy: the cluster has no '") + job +
                       "' task (it has: " +
                       [&] {
                         std::string jobs;
                         for (const std::string& j : cluster_.jobs()) {
                           jobs += (jobs.empty() ? "" : ", ") + j;
                         }
                         return jobs.empty() ? std::string("nothing") : jobs;
                       }() +
                       "). A parameter-server cluster needs at least one 'ps' and one 'worker' "
                       "in TF_CONFIG's cluster (a 'chief' coordinates; without one, worker 0 "
                       "does)");
    }
  }
  for (int index : cluster_.task_indices("ps")) {
    ps_.push_back(std::make_shared<ParameterClient>(
        job_task_name("ps", index), cluster_.task_address("ps", index), options_));
  }
  ps_ready_.assign(ps_.size(), false);
}

int ParameterServerStrategy::num_worker_tasks() const { return cluster_.num_tasks("worker"); }

std::vector<std::pair<std::string, std::string>> ParameterServerStrategy::worker_tasks() const {
  std::vector<std::pair<std::string, std::string>> tasks;
  for (int index : cluster_.task_indices("worker")) {
    tasks.emplace_back(job_task_name("worker", index), cluster_.task_address("worker", index));
  }
  return tasks;
}

std::string ParameterServerStrategy::placement_json() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Json on_ps = Json::object();
  for (const auto& [name, ps] : placement_) on_ps.set(name, Json(int64_t(ps)));
  Json shards = Json::object();
  for (const auto& [name, n] : sharded_) shards.set(name, Json(n));
  return Json::object({{"ps", on_ps}, {"shards", shards}}).dump();
}

namespace {

// The most shards one variable may be split in: a bound on what a placement may ask a worker to
// make (and so on the whole initial value it computes), far above TensorFlow's usual one shard
// per ps.
constexpr int64_t kMaxShards = int64_t(1) << 14;

// The placement in `json`, checked against a cluster of `num_ps` ps tasks.
struct Placement {
  std::map<std::string, int> on_ps;
  std::map<std::string, int64_t> shards;
};

Placement parse_placement(const std::string& json, int num_ps) {
  const std::string who = "ParameterServerStrategy::set_placement: ";
  const Json all = Json::parse(json);
  if (!all.is_object() || !all.contains("ps") || !all.contains("shards") ||
      !all.at("ps").is_object() || !all.at("shards").is_object()) {
    throw ValueError(who + "expected {\"ps\": {name: ps index}, \"shards\": {name: count}}, got " +
                     all.dump().substr(0, 200));
  }
  Placement out;
  const Json shards = all.at("shards");
  for (const std::string& name : shards.keys()) {
    const Json n = shards.at(name);
    const int64_t count = n.is_number() ? n.as_int() : 0;
    if (count < 1 || count > kMaxShards) {
      throw ValueError(who + "variable '" + name.substr(0, 200) + "' has " + n.dump() +
                       " shards: expected a count from 1 to " + std::to_string(kMaxShards));
    }
    out.shards[name] = count;
  }
  const Json on_ps = all.at("ps");
  for (const std::string& name : on_ps.keys()) {
    const Json i = on_ps.at(name);
    const int64_t index = i.is_number() ? i.as_int() : -1;
    if (index < 0 || index >= num_ps) {
      throw ValueError(who + "variable '" + name.substr(0, 200) + "' is placed on ps " + i.dump() +
                       ", but this cluster has " + std::to_string(num_ps) + " ps tasks: the "
                       "coordinator and this task must read the same cluster spec");
    }
    out.on_ps[name] = int(index);
  }
  return out;
}

}  // namespace

void ParameterServerStrategy::check_placement(const std::string& json) const {
  parse_placement(json, num_ps());
}

void ParameterServerStrategy::set_placement(const std::string& json) {
  Placement p = parse_placement(json, num_ps());
  std::lock_guard<std::mutex> lock(mutex_);
  placement_ = std::move(p.on_ps);
  sharded_ = std::move(p.shards);
}

void ParameterServerStrategy::check_variable_size(const VariableSpec& spec,
                                                  int64_t shards) const {
  const size_t limit = options_.max_message_bytes;
  const std::vector<int64_t>& dims = spec.shape.dims();
  // Bytes of one row (all dims but the first; all of a scalar) and the number of rows, without
  // overflow: each factor is checked against the limit before it multiplies.
  const auto fail = [&] {
    throw ValueError("ParameterServerStrategy: variable '" + spec.name + "' of shape " +
                     spec.shape.to_string() +
                     (shards > 1 ? " in " + std::to_string(shards) + " shards" : std::string()) +
                     " has a part over ParameterServerOptions::max_message_bytes (" +
                     std::to_string(limit) + " bytes), which cannot travel to its ps: give the "
                     "strategy a variable_partitioner (MaxSizePartitioner) or raise "
                     "max_message_bytes on every task");
  };
  size_t bytes = dtype_size(spec.dtype);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d <= 0) return;  // empty (negative dims are the shape's own error)
    if (i == 0 && shards > 1) d = (d + shards - 1) / shards;  // the largest shard's rows
    if (size_t(d) > limit || bytes > limit / size_t(d)) fail();
    bytes *= size_t(d);
  }
  if (bytes > limit) fail();
}

int64_t ParameterServerStrategy::planned_shards(const VariableSpec& spec) const {
  const Shape& shape = spec.shape;
  if (shape.rank() == 0 || shape[0] < 2) return 1;
  if (const auto* primary = dynamic_cast<const ShardedVariable*>(spec.colocate_with)) {
    return shape == primary->shape() ? primary->num_shards() : 1;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sharded_.find(spec.name);
    if (it != sharded_.end()) return std::min(it->second, shape[0]);
  }
  if (!partitioner_) return 1;
  // The partitioner multiplies the dims: first make sure the whole fits in kMaxShards shards
  // (a variable larger is refused anyway), so that no product overflows.
  check_variable_size(spec, std::min(shape[0], kMaxShards));
  const int64_t shards = std::max<int64_t>(1, (*partitioner_)(shape, spec.dtype, 0)[0]);
  if (shards > kMaxShards) {
    throw ValueError("ParameterServerStrategy: " + partitioner_->to_string() + " splits variable '" +
                     spec.name + "' of shape " + shape.to_string() + " in " +
                     std::to_string(shards) + " shards, over the " + std::to_string(kMaxShards) +
                     " one variable may have: use larger shards");
  }
  return shards;
}

VariablePtr ParameterServerStrategy::create_variable(const VariableSpec& spec,
                                                     const NextCreator& next) {
  // State read on sync (metrics) is each task's own, as in TensorFlow.
  if (spec.synchronization == VariableSynchronization::kOnRead) {
    check_variable_size(spec, 1);
    return next(spec);
  }
  const auto make_remote = [this](const VariableSpec& s) { return create_remote(s); };
  // Sharded as the coordinator sharded it (its placement), else as the partitioner says; a slot
  // of a sharded variable is sharded alike (create_sharded_variable sees colocate_with).
  std::optional<int64_t> shards;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sharded_.find(spec.name);
    if (it != sharded_.end()) shards = it->second;
  }
  VariablePtr v;
  // Refused before the initial value is made (a sharded variable's is made whole).
  check_variable_size(spec, planned_shards(spec));
  if (shards) {
    v = create_sharded_variable(spec, FixedShardsPartitioner(*shards), make_remote);
  } else if (partitioner_ || dynamic_cast<const ShardedVariable*>(spec.colocate_with)) {
    static const FixedShardsPartitioner kWhole(1);
    v = create_sharded_variable(spec, partitioner_ ? *partitioner_ : kWhole, make_remote);
  } else {
    return create_remote(spec);
  }
  if (const auto* sharded = dynamic_cast<const ShardedVariable*>(v.get())) {
    std::lock_guard<std::mutex> lock(mutex_);
    sharded_[spec.name] = sharded->num_shards();
  }
  return v;
}

VariablePtr ParameterServerStrategy::create_remote(const VariableSpec& spec) {
  std::shared_ptr<ParameterClient> client;
  // A name placed already (listed by the coordinator's placement, or made by this task before)
  // exists on its ps: the handle attaches to it, and no initial value is computed or sent.
  bool attach = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    attach = placement_.count(spec.name) > 0;
    int ps = -1;
    if (const auto* primary = dynamic_cast<const RemoteVariable*>(spec.colocate_with)) {
      for (int i = 0; i < num_ps(); ++i) {
        if (ps_[size_t(i)] == primary->client()) ps = i;
      }
    }
    if (ps < 0) {
      auto it = placement_.find(spec.name);
      ps = it != placement_.end() ? it->second : next_ps_++ % num_ps();
    }
    placement_[spec.name] = ps;
    client = ps_[size_t(ps)];
    if (!ps_ready_[size_t(ps)]) {
      client->wait_until_ready(options_.connect_timeout);
      ps_ready_[size_t(ps)] = true;
    }
  }
  return std::make_shared<RemoteVariable>(
      spec, client, spec.name,
      attach ? RemoteVariable::Origin::kAttach : RemoteVariable::Origin::kCreate);
}

void ParameterServerStrategy::shutdown_cluster() {
  for (const auto& [task, address] : worker_tasks()) {
    try {
      WorkerClient(task, address, options_).shutdown();
    } catch (const Error& e) {
      std::cerr << "ParameterServerStrategy: " << task << " did not take the shutdown: "
                << e.what() << "\n";
    }
  }
  for (const auto& ps : ps_) {
    try {
      ps->shutdown();
    } catch (const Error& e) {
      std::cerr << "ParameterServerStrategy: " << ps->describe()
                << " did not take the shutdown: " << e.what() << "\n";
    }
  }
}

ParameterServerStrategy::~ParameterServerStrategy() = default;

RemoteTraining* ParameterServerStrategy::remote_training() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!training_) training_ = std::make_unique<ParameterServerTraining>(*this);
  return training_.get();
}

ClusterCoordinator* ParameterServerStrategy::coordinator() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return coordinator_;
}

void ParameterServerStrategy::attach_coordinator(ClusterCoordinator* coordinator) {
  std::lock_guard<std::mutex> lock(mutex_);
  coordinator_ = coordinator;
}

void ParameterServerStrategy::detach_coordinator(ClusterCoordinator* coordinator) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (coordinator_ == coordinator) coordinator_ = nullptr;
}

}  // namespace strata::distribute
