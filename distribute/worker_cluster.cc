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
#include "distribute/elastic_group.h"
#include "distribute/errors.h"
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

struct WorkerCluster::View {
  ElasticGroup::View group;
};

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
  const int min_workers = options.elastic_.min_workers_;
  if (min_workers > 0) {
    if (min_workers > int(tasks.size())) {
      throw ValueError(std::string(who) + ": ElasticOptions.min_workers is " +
                       std::to_string(min_workers) + " but the cluster has only " +
                       std::to_string(tasks.size()) + " chief and worker slots; list every slot "
                       "the job may use in TF_CONFIG, or lower min_workers");
    }
    coordination.elastic_min_tasks = size_t(min_workers);
    coordination.elastic_grace = millis(options.elastic_.start_grace_seconds_);
  }

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
  WorkerCluster* self = cluster.get();
  if (min_workers > 0) {
    // The first membership holding this task: every slot, or the first min_workers after the
    // grace period; a task joining a running job waits here until the others re-form.
    cluster->group_ = std::make_unique<ElasticGroup>(*client, gloo);
    auto view = std::make_shared<View>();
    try {
      view->group = cluster->group_->form(0, coordination.register_timeout);
    } catch (const JobFinishedError&) {
      // Registered, so a member the finishing workers wait for at the shutdown barrier: leave
      // through it with them, then tell the program there is nothing to do.
      try {
        cluster->client_->shutdown();
      } catch (const std::exception&) {
      }
      throw;
    }
    cluster->view_ = std::move(view);
    cluster->watcher_ = std::thread([self] { self->watch_membership(); });
  } else {
    cluster->gloo_ = std::make_shared<GlooCommunicator>(*cluster->client_, cluster->worker_index_,
                                                        int(tasks.size()), gloo);
  }
  // A task the coordination service declares dead (or an error another task posts) fails the
  // collective this worker is waiting in at once, rather than after the collective timeout.
  // The hooks are the cluster's own (the client, and so this callback, goes before they do).
  // (gloo_ through a weak pointer and the view under its mutex: the destructor releases them
  // while the client's heartbeat thread may still call this.)
  std::weak_ptr<GlooCommunicator> weak = cluster->gloo_;
  client->set_error_callback([weak, self](const std::string& error) {
    if (auto g = weak.lock()) g->abort(error);
    if (auto v = self->view()) v->group.communicator->abort(error);
    std::lock_guard<std::mutex> lock(self->hooks_mutex_);
    for (const auto& [id, hook] : self->error_hooks_) hook(error);
  });
  cluster->failed_ = false;
  return cluster;
}

WorkerCluster::~WorkerCluster() {
  if (watcher_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(view_mutex_);
      watcher_stop_ = true;
    }
    watcher_wake_.notify_all();
    watcher_.join();
  }
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
  {
    std::lock_guard<std::mutex> lock(view_mutex_);
    view_.reset();
  }
  group_.reset();
  client_.reset();
  service_.reset();
}

std::shared_ptr<const WorkerCluster::View> WorkerCluster::view() const {
  std::lock_guard<std::mutex> lock(view_mutex_);
  return view_;
}

int WorkerCluster::num_workers() const {
  if (!group_) return int(task_names_.size());  // not elastic: no lock on the hot path
  if (auto v = view()) return int(v->group.members.size());
  return int(task_names_.size());
}

int WorkerCluster::worker_index() const {
  if (!group_) return worker_index_;
  if (auto v = view()) return v->group.rank;
  return worker_index_;
}

const std::string& WorkerCluster::task_name(int worker) const {
  if (!group_) return task_names_.at(size_t(worker));
  if (auto v = view()) return task_names_.at(size_t(v->group.members.at(size_t(worker))));
  return task_names_.at(size_t(worker));
}

uint64_t WorkerCluster::generation() const {
  auto v = view();
  return v ? v->group.generation : 0;
}

uint64_t WorkerCluster::generation_seen() const {
  return group_ ? client_->membership_generation_seen() : 0;
}

void WorkerCluster::reform(std::chrono::milliseconds timeout) {
  STRATA_CHECK(group_ != nullptr);
  // Re-forming after a failed collective (not for a join): the service learns of the broken
  // connection now, so that it drops a member that died or was cut off within seconds rather
  // than after the heartbeat timeout (CoordinationOptions::suspicion_timeout).
  const std::shared_ptr<const View> current = view();
  if (current && current->group.communicator->spent()) client_->report_lost_peer();
  auto next = std::make_shared<View>();
  try {
    next->group = group_->form(generation(), timeout);
  } catch (const JobFinishedError& e) {
    // A member completed the last step (its collectives did) while this worker's failed: this
    // worker has something to do (the step) that nobody will do with it. Not "nothing to do".
    throw CoordinationError(task_names_.at(size_t(worker_index_)) + " lost a peer during the "
                            "job's last step, which the other members completed: they finished "
                            "the job and hold its final state; this worker's last step did not "
                            "complete (" + std::string(e.what()) + ")");
  }
  std::lock_guard<std::mutex> lock(view_mutex_);
  view_ = std::move(next);
}

// Heartbeat replies carry the membership's generation; when one comes that has lost a member
// of the current view, that view's collectives can never complete: abort them now rather than
// after the collective timeout. (A generation that only adds a member aborts nothing: the
// members re-form for it at a step boundary.)
void WorkerCluster::watch_membership() {
  uint64_t handled = 0;
  std::unique_lock<std::mutex> lock(view_mutex_);
  while (!watcher_stop_) {
    watcher_wake_.wait_for(lock, std::chrono::milliseconds(50));
    if (watcher_stop_) return;
    const uint64_t seen = client_->membership_generation_seen();
    std::shared_ptr<const View> v = view_;
    if (seen <= handled || !v || seen <= v->group.generation) continue;
    lock.unlock();
    try {
      const CoordinationClient::Membership m =
          client_->membership_after(v->group.generation, std::chrono::milliseconds(2000));
      handled = m.generation;
      for (int member : v->group.members) {
        if (!std::binary_search(m.members.begin(), m.members.end(), member)) {
          v->group.communicator->abort(
              task_names_.at(size_t(member)) + " left the job (the coordination service lost "
              "its heartbeats; membership generation " + std::to_string(m.generation) +
              "): the workers left re-form without it");
          break;
        }
      }
    } catch (const std::exception&) {
      // The service is slow or gone: the next heartbeat (or the job's error) tells.
    }
    lock.lock();
  }
}

std::shared_ptr<Communicator> WorkerCluster::communicator() const {
  if (!group_) return gloo_;
  if (auto v = view()) return v->group.communicator;
  return gloo_;
}

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
  if (auto v = view()) v->group.communicator->abort(reason);
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
