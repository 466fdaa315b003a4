#include "distribute/parameter_server/parameter_server_strategy.h"

#include <iostream>
#include <optional>

#include "distribute/coordination/key_value_store.h"
#include "distribute/parameter_server/ps_roles.h"
#include "distribute/parameter_server/ps_trainer.h"
#include "distribute/parameter_server/remote_variable.h"
#include "distribute/parameter_server/sharded_variable.h"
#include "distribute/parameter_server/worker_client.h"
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

void ParameterServerStrategy::set_placement(const std::string& json) {
  const Json all = Json::parse(json);
  const Json parsed = all.at("ps");
  const Json shards = all.at("shards");
  std::map<std::string, int64_t> sharded;
  for (const std::string& name : shards.keys()) sharded[name] = shards.at(name).as_int();
  std::map<std::string, int> placement;
  for (const std::string& name : parsed.keys()) {
    const int64_t index = parsed.at(name).as_int();
    if (index < 0 || index >= num_ps()) {
      throw ValueError("ParameterServerStrategy::set_placement: variable '" + name +
                       "' is placed on ps " + std::to_string(index) + ", but this cluster has " +
                       std::to_string(num_ps()) + " ps tasks: the coordinator and this task "
                       "must read the same cluster spec");
    }
    placement[name] = int(index);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  placement_ = std::move(placement);
  sharded_ = std::move(sharded);
}

VariablePtr ParameterServerStrategy::create_variable(const VariableSpec& spec,
                                                     const NextCreator& next) {
  // State read on sync (metrics) is each task's own, as in TensorFlow.
  if (spec.synchronization == VariableSynchronization::kOnRead) return next(spec);
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
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
  return std::make_shared<RemoteVariable>(spec, client, spec.name, /*create=*/true);
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
