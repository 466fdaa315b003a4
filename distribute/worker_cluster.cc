#include "distribute/worker_cluster.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "distribute/cluster/coordination/coordination_client.h"
#include "distribute/cluster/coordination/coordination_service.h"
#include "distribute/cluster/loopback_address.h"
#include "distribute/cluster/resolvers/cluster_roles.h"
#include "distribute/cluster/resolvers/cluster_spec.h"
#include "distribute/collectives/gloo/gloo_communicator.h"
#include "framework/core/error.h"

namespace strata::distribute {
namespace {

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(int64_t(seconds * 1000.0));
}

// The training tasks in worker order: chief (or master) first, then the workers; counted as
// `task_type` (this task's: chief, master or worker) sees them, since a cluster may have no
// "worker" job.
std::vector<CoordinationTask> training_tasks(const ClusterSpec& spec, const std::string& task_type,
                                             const char* who) {
  const int n = worker_count(spec, task_type);
  std::vector<CoordinationTask> tasks(static_cast<size_t>(n));
  for (const char* job : {"chief", "master", "worker"}) {
    if (!spec.has_job(job)) continue;
    for (int index : spec.task_indices(job)) {
      const int id = id_in_cluster(spec, job, index);
      if (id < 0 || id >= n || !tasks[size_t(id)].job.empty()) {
        throw ValueError(std::string(who) + ": the cluster's '" + job + "' tasks are numbered " +
                         "with gaps; number every job's tasks 0, 1, 2, ... (a list in TF_CONFIG)");
      }
      tasks[size_t(id)] = CoordinationTask{job, index, spec.task_address(job, index)};
    }
  }
  return tasks;
}

// The address this host's Gloo device binds and peers connect to: the task's own host from the
// cluster spec when it is one of this machine's addresses, else this machine's hostname (a
// Kubernetes service name resolves to an address that is not the pod's own).
std::string local_gloo_host(const std::string& configured_host) {
  const std::string task_host = loopback_if_localhost(configured_host);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(task_host.c_str(), nullptr, &hints, &found) == 0) {
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      const int fd = socket(a->ai_family, SOCK_STREAM, 0);
      if (fd < 0) continue;
      const bool local = bind(fd, a->ai_addr, a->ai_addrlen) == 0;  // port 0 in the result
      close(fd);
      if (local) {
        char host[NI_MAXHOST];
        if (getnameinfo(a->ai_addr, a->ai_addrlen, host, sizeof host, nullptr, 0,
                        NI_NUMERICHOST) == 0) {
          freeaddrinfo(found);
          return host;
        }
      }
    }
    freeaddrinfo(found);
  }
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return task_host;
  return name;
}

}  // namespace

std::unique_ptr<WorkerCluster> WorkerCluster::join(const ClusterResolver& resolver,
                                                   const CommunicationOptions& options,
                                                   const char* who) {
  const ClusterSpec spec = resolver.cluster_spec();
  if (spec.empty()) return nullptr;
  const std::optional<std::string> type = resolver.task_type();
  const std::optional<int> id = resolver.task_id();
  if (!type || !id) {
    throw ValueError(std::string(who) + ": the cluster has tasks but this task's type and index "
                     "are not given; set TF_CONFIG's \"task\": {\"type\": \"worker\", \"index\": 0}");
  }
  validate_task(spec, *type, *id, "TF_CONFIG");
  if (*type != "chief" && *type != "master" && *type != "worker") {
    throw ValueError(std::string(who) + " runs on the cluster's chief and worker tasks, but this "
                     "task is " + *type + " " + std::to_string(*id) + "; " +
                     (*type == "ps" ? "ps tasks belong to ParameterServerStrategy"
                                    : "an evaluator evaluates checkpoints on its own") +
                     ": leave it out of the training cluster or start it without this strategy");
  }
  const std::vector<CoordinationTask> tasks = training_tasks(spec, *type, who);
  if (tasks.size() <= 1) return nullptr;

  std::unique_ptr<WorkerCluster> cluster(new WorkerCluster());
  cluster->worker_index_ = id_in_cluster(spec, *type, *id);
  for (const CoordinationTask& t : tasks) cluster->task_names_.push_back(t.name());

  // The store must hold the Gloo mesh's N(N-1) pair addresses at once (past max_keys' default
  // beyond 256 workers).
  CoordinationOptions coordination = with_room_for_rendezvous(CoordinationOptions(), tasks.size());
  coordination.heartbeat_timeout = millis(options.heartbeat_timeout_seconds_);
  coordination.heartbeat_interval = std::max(std::chrono::milliseconds(100),
                                             coordination.heartbeat_timeout / 10);
  coordination.register_timeout = millis(options.register_timeout_seconds_);

  const TaskAddress leader = coordinator_task(spec);
  const std::string service_address = spec.task_address(leader.type, leader.index);
  if (leader.type == *type && leader.index == *id) {
    // On the coordinator's own address, as every server of a job (job_security.h: the bind
    // host asks for every interface instead).
    cluster->service_ = CoordinationService::start(service_address, tasks, coordination);
  }
  cluster->linger_ = 2 * coordination.heartbeat_interval + std::chrono::milliseconds(200);
  cluster->client_ = std::make_unique<CoordinationClient>(
      service_address, tasks[size_t(cluster->worker_index_)], tasks, coordination);
  // A job that never came together has no shutdown barrier to wait at.
  cluster->failed_ = true;
  cluster->client_->connect();

  GlooOptions gloo;
  const HostPort me = parse_host_port(tasks[size_t(cluster->worker_index_)].address, "this task's address");
  gloo.hostname = local_gloo_host(me.host);
  gloo.timeout = millis(options.timeout_seconds_);
  gloo.prefix = "gloo";
  gloo.rank_name = [names = cluster->task_names_](int rank) { return names.at(size_t(rank)); };
  CoordinationClient* client = cluster->client_.get();
  gloo.diagnose = [client] { return client->posted_error().value_or(""); };
  cluster->gloo_ = std::make_shared<GlooCommunicator>(*cluster->client_, cluster->worker_index_,
                                                      int(tasks.size()), gloo);
  // A task the coordination service declares dead (or an error another task posts) fails the
  // collective this worker is waiting in at once, rather than after the collective timeout.
  // The hooks are the cluster's own (the client, and so this callback, goes before they do).
  std::weak_ptr<GlooCommunicator> weak = cluster->gloo_;
  WorkerCluster* self = cluster.get();
  client->set_error_callback([weak, self](const std::string& error) {
    if (auto g = weak.lock()) g->abort(error);
    std::lock_guard<std::mutex> lock(self->hooks_mutex_);
    for (const auto& [id, hook] : self->error_hooks_) hook(error);
  });
  cluster->failed_ = false;
  return cluster;
}

WorkerCluster::~WorkerCluster() {
  // Every worker leaves together, so the coordinator's service outlives every client's last
  // call; after a failure nobody waits for the others.
  if (client_ && !failed_ && known_error().empty()) {
    try {
      client_->shutdown();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "MultiWorkerMirroredStrategy: %s\n", e.what());
    }
  }
  // After a failure the service stays up a little longer, so every other worker's next
  // heartbeat still learns which task failed rather than only that the service is gone.
  if (service_ && (failed_ || !known_error().empty())) std::this_thread::sleep_for(linger_);
  gloo_.reset();
  client_.reset();
  service_.reset();
}

std::shared_ptr<Communicator> WorkerCluster::communicator() const { return gloo_; }

KeyValueStore& WorkerCluster::store() const { return *client_; }

int WorkerCluster::add_error_hook(std::function<void(const std::string&)> hook) {
  std::lock_guard<std::mutex> lock(hooks_mutex_);
  error_hooks_[next_hook_] = std::move(hook);
  return next_hook_++;
}

void WorkerCluster::remove_error_hook(int id) {
  std::lock_guard<std::mutex> lock(hooks_mutex_);
  error_hooks_.erase(id);
}

void WorkerCluster::abort(const std::string& reason) {
  if (gloo_) gloo_->abort(reason);
}

void WorkerCluster::report_error(const std::string& message) {
  failed_ = true;
  if (!known_error().empty()) return;
  try {
    client_->report_error(message);
  } catch (const std::exception&) {
    // The service is gone too: the other workers learn of it from their own heartbeats.
  }
}

std::string WorkerCluster::known_error() const {
  if (!client_) return "";
  try {
    return client_->posted_error().value_or("");
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace strata::distribute
