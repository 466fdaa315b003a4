#include "distribute/parameter_server/wire/remote_step.h"

#include <exception>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "framework/autograd/grad_mode.h"
#include "framework/ops/math_ops.h"

namespace strata::distribute {

namespace {

thread_local RemoteStep* current_step = nullptr;

// The caller's tensors may change after the call returns (a buffer reused next step): the
// queue keeps its own copies.
Gradient owned(const Gradient& grad) {
  if (grad.is_sparse()) {
    IndexedSlices s = grad.slices();
    s.indices = s.indices.clone();
    s.values = s.values.clone();
    return Gradient(std::move(s));
  }
  return Gradient(grad.to_dense().clone());   // a shard has no dense value: to_dense() says so
}

}  // namespace

std::vector<RemoteReadPlan::PsReads> RemoteReadPlan::reads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reads_;
}

void RemoteReadPlan::set(std::vector<PsReads> reads) {
  std::lock_guard<std::mutex> lock(mutex_);
  reads_ = std::move(reads);
}

struct RemoteStep::Ps {
  std::shared_ptr<ParameterClient> client;
  std::unordered_map<std::string, Tensor> values;   // the step's copies
  std::set<std::string> read_whole;                 // ids read through read(): the next plan
  std::vector<PendingAssign> assigns;
  std::vector<PendingPush> pushes;
  std::unordered_set<std::string> queued;   // ids with a queued write
  std::unordered_set<std::string> pushed;   // ids with a queued update (an assign must follow it)
};

RemoteStep::RemoteStep(std::shared_ptr<RemoteReadPlan> plan) : plan_(std::move(plan)) {
  if (current_step != nullptr) return;   // nested: the outer step carries the traffic
  if (plan_) {
    // Every ps is asked at once; this thread takes the replies.
    const std::vector<RemoteReadPlan::PsReads> reads = plan_->reads();
    ParallelCalls calls;
    std::vector<std::shared_ptr<std::vector<Tensor>>> values;
    for (const RemoteReadPlan::PsReads& r : reads) values.push_back(r.client->read_in(calls, r.ids));
    calls.wait();  // the first failure, named, is thrown
    for (size_t i = 0; i < reads.size(); ++i) {
      Ps& p = ps(reads[i].client);
      for (size_t k = 0; k < reads[i].ids.size(); ++k) {
        p.values.emplace(reads[i].ids[k], std::move((*values[i])[k]));
      }
    }
  }
  outer_ = current_step;
  current_step = this;
  active_ = true;
}

RemoteStep::~RemoteStep() {
  if (active_) current_step = outer_;
}

RemoteStep* RemoteStep::current() { return current_step; }

RemoteStep::Ps& RemoteStep::ps(const std::shared_ptr<ParameterClient>& client) {
  std::unique_ptr<Ps>& p = ps_[client.get()];
  if (!p) {
    p = std::make_unique<Ps>();
    p->client = client;
  }
  return *p;
}

RemoteStep::Queue RemoteStep::take_queue(Ps& p) {
  Queue q{std::move(p.assigns), std::move(p.pushes)};
  p.assigns.clear();
  p.pushes.clear();
  p.queued.clear();
  p.pushed.clear();
  return q;
}

void RemoteStep::send(Ps& p) {
  const Queue q = take_queue(p);
  p.client->write(q.assigns, q.pushes);
}

void RemoteStep::finish() {
  if (!active_) return;
  // Every ps is sent its writes at once; this thread takes the replies.
  {
    ParallelCalls calls;
    for (auto& [key, p] : ps_) {
      if (p->assigns.empty() && p->pushes.empty()) continue;
      const Queue q = take_queue(*p);
      p->client->write_in(calls, q.assigns, q.pushes);
    }
    calls.wait();  // the first failure, named, is thrown
  }
  if (plan_) {
    std::vector<RemoteReadPlan::PsReads> next;
    for (auto& [key, p] : ps_) {
      if (p->read_whole.empty()) continue;
      next.push_back({p->client, std::vector<std::string>(p->read_whole.begin(),
                                                          p->read_whole.end())});
    }
    plan_->set(std::move(next));
  }
}

Tensor RemoteStep::read(const std::shared_ptr<ParameterClient>& client, const std::string& id) {
  Ps& p = ps(client);
  p.read_whole.insert(id);
  auto it = p.values.find(id);
  if (it != p.values.end()) return it->second;
  if (p.queued.count(id)) send(p);   // its queued update first: the step reads its own writes
  Tensor value = client->read({id})[0];
  p.values[id] = value;
  return value;
}

void RemoteStep::before_direct(const std::shared_ptr<ParameterClient>& client,
                               const std::string& id) {
  Ps& p = ps(client);
  if (p.queued.count(id)) send(p);
}

void RemoteStep::queue_assign(const std::shared_ptr<ParameterClient>& client,
                              const std::string& id, const Tensor& value, AssignMode mode) {
  Ps& p = ps(client);
  // The ps applies a request's assignments before its updates: one made after a queued update
  // of the same variable waits for that update to be sent.
  if (p.pushed.count(id)) send(p);
  // On the host, as the step's copies are (a GPU worker's BatchNorm statistics come from its GPU).
  const Tensor mine = value.detach().to(Device::cpu()).clone();
  auto it = p.values.find(id);
  if (it != p.values.end()) {
    if (mode == AssignMode::kAssign) {
      it->second = mine;
    } else if (is_floating(mine.dtype())) {
      NoGradGuard no_grad;
      it->second = mode == AssignMode::kAdd ? add(it->second, mine) : subtract(it->second, mine);
    } else {
      // Integers: the ps checks the sum for overflow; the step reads the ps's result.
      p.values.erase(it);
    }
  }
  p.assigns.push_back({id, mine, mode});
  p.queued.insert(id);
}

void RemoteStep::queue_push(const std::shared_ptr<ParameterClient>& client, PendingPush push) {
  Ps& p = ps(client);
  push.grad = owned(push.grad);
  // The update changes the variable and its slots on the ps: the step's copies are stale.
  std::vector<std::string> changed = push.slot_ids;
  changed.push_back(push.id);
  for (const std::string& id : changed) {
    p.values.erase(id);
    p.queued.insert(id);
    p.pushed.insert(id);
  }
  p.pushes.push_back(std::move(push));
}

}  // namespace strata::distribute
