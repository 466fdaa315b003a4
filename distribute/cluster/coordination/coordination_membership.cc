// The coordination service's elastic membership (CoordinationOptions::elastic_min_tasks): which
// of the cluster's tasks the job runs with, as generations the service publishes in its own
// store. The state's one mutex guards this too; every function here runs under it.
#include <algorithm>
#include <string>

#include "distribute/cluster/coordination/coordination_state.h"

namespace strata::distribute::coordination_internal {

namespace {

// How many generations' keys the store keeps: a client that fell further behind reads the
// latest (CoordinationClient::membership_after).
constexpr uint64_t kKeptGenerations = 16;

std::string generation_key(uint64_t generation) {
  return std::string(kMembershipKey) + "/" + std::to_string(generation);
}

}  // namespace

void CoordinationState::elastic_register(size_t i, uint64_t incarnation) {
  TaskState& task = tasks_[i];
  task.registered = true;
  task.incarnation = incarnation;   // a restarted process's predecessor is refused from now on
  task.leaving = false;
  task.last_heartbeat = Clock::now();
  wake_.notify_one();   // its heartbeat deadline; maybe the formation's
  if (generation_ == 0) {
    // Not formed: every task up forms it at once; the minimum up starts the grace period.
    const size_t up = registered_tasks();
    if (up == tasks_.size()) {
      form_membership();
    } else if (up >= options_.elastic_min_tasks && !form_at_) {
      form_at_ = Clock::now() + options_.elastic_grace;
    }
    return;
  }
  // A new task, or a new process of a member (its predecessor's connections are gone either
  // way): a new generation.
  if (!std::binary_search(members_.begin(), members_.end(), i)) {
    members_.insert(std::upper_bound(members_.begin(), members_.end(), i), i);
  }
  announce_membership();
}

void CoordinationState::elastic_task_lost(size_t i, const std::string& why) {
  tasks_[i].registered = false;
  if (generation_ == 0) {
    if (registered_tasks() < options_.elastic_min_tasks) form_at_.reset();
    return;
  }
  auto it = std::lower_bound(members_.begin(), members_.end(), i);
  if (it == members_.end() || *it != i) return;
  members_.erase(it);
  if (members_.size() < options_.elastic_min_tasks) {
    std::string left;
    for (size_t m : members_) left += (left.empty() ? "" : ", ") + tasks_[m].spec.name();
    post_error(why + "; " + std::to_string(members_.size()) + " task(s) left (" +
               (left.empty() ? "none" : left) + "), fewer than the " +
               std::to_string(options_.elastic_min_tasks) + " the job needs at least "
               "(elastic_min_tasks). Restart the lost tasks, or the job from its last backup");
    return;
  }
  announce_membership();
}

CoordinationState::Clock::time_point CoordinationState::elastic_formation(Clock::time_point now,
                                                                          Clock::time_point next) {
  if (generation_ != 0 || !form_at_) return next;
  if (*form_at_ > now) return std::min(next, *form_at_);
  form_membership();
  return next;
}

void CoordinationState::form_membership() {
  members_.clear();
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].registered) members_.push_back(i);
  }
  form_at_.reset();
  announce_membership();
}

size_t CoordinationState::registered_tasks() const {
  return size_t(std::count_if(tasks_.begin(), tasks_.end(),
                              [](const TaskState& t) { return t.registered; }));
}

void CoordinationState::announce_membership() {
  ++generation_;
  std::string value = std::to_string(generation_) + ":";
  for (size_t k = 0; k < members_.size(); ++k) {
    value += (k ? "," : "") + std::to_string(members_[k]);
  }
  publish(generation_key(generation_), value);
  publish(kMembershipKey, value);
  if (generation_ > kKeptGenerations) {
    auto old = values_.find(generation_key(generation_ - kKeptGenerations));
    if (old != values_.end()) {
      store_bytes_ -= old->first.size() + old->second.size();
      values_.erase(old);
    }
  }
  // A barrier that waited only for members who left is complete now.
  for (auto it = barriers_.begin(); it != barriers_.end();) {
    Barrier& barrier = it->second;
    if (barrier.failure || barrier.waiters.empty() || !everyone_arrived(barrier.arrived)) {
      ++it;
      continue;
    }
    for (Reactor* waiter : barrier.waiters) waiter->Finish(grpc::Status::OK);
    it = barriers_.erase(it);
  }
}

}  // namespace strata::distribute::coordination_internal
