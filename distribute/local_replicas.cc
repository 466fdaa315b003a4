#include "distribute/local_replicas.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "framework/backend/gpu_runtime.h"
#include "framework/config/devices.h"
#include "framework/core/device_scope.h"
#include "framework/core/error.h"
#include "framework/core/random.h"
#include "framework/core/threading.h"
#include "framework/strategy/replica_context.h"

namespace strata::distribute {
namespace {

class LocalReplicaContext final : public ReplicaContext {
 public:
  LocalReplicaContext(int local_id, ReplicaIds ids, Device device)
      : local_id_(local_id), id_(ids.first + local_id), n_(ids.in_sync), device_(device) {}
  int replica_id_in_sync_group() const override { return id_; }
  int num_replicas_in_sync() const override { return n_; }
  int local_replica_id() const override { return local_id_; }
  Device device() const override { return device_; }
  void all_reduce(Tensor& t, ReduceOp op) override { comm_->all_reduce(t, op); }
  std::shared_ptr<CollectiveWork> all_reduce_async(Tensor t, ReduceOp op) override {
    return comm_->all_reduce_async(std::move(t), op);
  }
  Tensor reduce_scatter(const Tensor& t, ReduceOp op) override {
    return comm_->reduce_scatter(t, op);
  }
  void broadcast(Tensor& t, int root) override { comm_->broadcast(t, root); }
  void barrier() override { comm_->barrier(); }
  void set_communicator(std::shared_ptr<Communicator> comm) { comm_ = std::move(comm); }
  void set_ids(ReplicaIds ids) {
    id_ = ids.first + local_id_;
    n_ = ids.in_sync;
  }

 private:
  int local_id_, id_, n_;
  Device device_;
  std::shared_ptr<Communicator> comm_;
};

}  // namespace

struct LocalReplicas::Shared {
  std::mutex mutex;
  std::condition_variable cv;
  const std::function<void(int)>* job = nullptr;
  uint64_t generation = 0;  // bumped per run(); workers run each generation once
  int remaining = 0;        // workers still running the current job
  bool stopping = false;
  std::exception_ptr first_error;
  int thread_share_per_replica = 1;  // the intra-op threads split evenly over the replicas
  GeneratorState base_generator;        // the global generator when run() began
  std::vector<uint64_t> generator_ends;  // where each replica's stream got to
  GroupFactory factory;
  std::vector<Device> devices;
  std::unique_ptr<CommunicatorGroup> group;
  std::vector<std::unique_ptr<LocalReplicaContext>> contexts;
  std::vector<std::thread> threads;

  void make_group() {
    group.reset();  // an NCCL group releases its communicators before new ones are made
    group = factory(devices);
    for (size_t r = 0; r < contexts.size(); ++r) contexts[r]->set_communicator(group->communicator(int(r)));
  }

  // Runs the job as replica r with its context, device, thread share and strategy scope.
  void run_as(int r, Strategy* owner, const std::function<void(int)>& fn) {
    LocalReplicaContext* context = contexts[size_t(r)].get();
    const int previous_share = thread_share();
    try {
      // Replica r draws from its own stream: replica 0 continues the global one (one replica
      // draws exactly what no strategy would), the others from seeds derived from it.
      // Workers of a multi-worker strategy derive theirs from the global replica id, so no two
      // replicas anywhere draw the same dropout masks.
      const int id = context->replica_id_in_sync_group();
      GeneratorState start = base_generator;
      if (id > 0) start.seed = base_generator.seed ^ (0x9E3779B97F4A7C15ULL * uint64_t(id));
      ThreadGeneratorScope generator(start, uint64_t(id));
      struct RecordEnd {
        Shared* shared;
        int r;
        const ThreadGeneratorScope& generator;
        ~RecordEnd() { shared->generator_ends[size_t(r)] = generator.state().offset; }
      } record_end{this, r, generator};
      Strategy::Scope scope(owner);
      ReplicaContextScope in_replica(context);
      DeviceScope on_device(context->device());
      set_thread_share(thread_share_per_replica);
      fn(r);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!first_error) {
        first_error = std::current_exception();
        // The others must not wait in a collective for a replica that has given up.
        if (group) group->abort("replica " + std::to_string(r) + " failed");
      }
    }
    set_thread_share(previous_share);
  }
};

LocalReplicas::LocalReplicas(Strategy* owner, std::vector<Device> devices, GroupFactory make_group,
                             ReplicaIds ids)
    : owner_(owner), devices_(std::move(devices)), shared_(std::make_shared<Shared>()) {
  const int n = int(devices_.size());
  if (ids.in_sync == 0) ids.in_sync = n;
  STRATA_CHECK(ids.first >= 0 && ids.first + n <= ids.in_sync);
  shared_->factory = make_group ? std::move(make_group) : GroupFactory(make_default_group);
  shared_->devices = devices_;
  for (int r = 0; r < n; ++r) {
    shared_->contexts.push_back(std::make_unique<LocalReplicaContext>(r, ids, devices_[size_t(r)]));
  }
  shared_->make_group();
  for (int r = 1; r < n; ++r) {
    shared_->threads.emplace_back([shared = shared_.get(), owner, r] {
      uint64_t seen = 0;
      for (;;) {
        const std::function<void(int)>* job = nullptr;
        {
          std::unique_lock<std::mutex> lock(shared->mutex);
          shared->cv.wait(lock, [&] { return shared->stopping || shared->generation != seen; });
          if (shared->stopping) return;
          seen = shared->generation;
          job = shared->job;
        }
        shared->run_as(r, owner, *job);
        std::lock_guard<std::mutex> lock(shared->mutex);
        if (--shared->remaining == 0) shared->cv.notify_all();
      }
    });
  }
}

LocalReplicas::~LocalReplicas() {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->stopping = true;
  }
  shared_->cv.notify_all();
  for (std::thread& t : shared_->threads) t.join();
}

void LocalReplicas::run(const std::function<void(int)>& fn) {
  if (current_replica_context() != nullptr) {
    throw StateError(owner_->name() + ".run: called from inside a replica (strategy.run or a "
                     "training step); call it from the cross-replica context");
  }
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->job = &fn;
    shared_->first_error = nullptr;
    shared_->remaining = size() - 1;
    shared_->base_generator = get_generator_state();
    shared_->thread_share_per_replica = std::max(1, get_num_threads() / size());
    shared_->generator_ends.assign(size_t(size()), shared_->base_generator.offset);
    ++shared_->generation;
  }
  shared_->cv.notify_all();
  shared_->run_as(0, owner_, fn);
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    shared_->cv.wait(lock, [&] { return shared_->remaining == 0; });
    shared_->job = nullptr;
    error = shared_->first_error;
    // The global generator moves past the longest stream, so the next step draws fresh numbers.
    GeneratorState after = shared_->base_generator;
    for (uint64_t end : shared_->generator_ends) after.offset = std::max(after.offset, end);
    set_generator_state(after);
  }
  if (error) {
    shared_->make_group();  // the aborted group is spent
    std::rethrow_exception(error);
  }
}

void LocalReplicas::remake_group(ReplicaIds ids) {
  const int n = size();
  if (ids.in_sync == 0) ids.in_sync = n;
  STRATA_CHECK(ids.first >= 0 && ids.first + n <= ids.in_sync);
  std::lock_guard<std::mutex> lock(shared_->mutex);  // no replica runs between steps
  for (auto& context : shared_->contexts) context->set_ids(ids);
  shared_->make_group();
}

std::vector<Device> resolve_devices(const std::vector<std::string>& names, const char* who) {
  std::vector<Device> devices;
  if (names.empty()) {
    return gpu::device_count() > 0 ? config::list_logical_devices("GPU")
                                   : config::list_logical_devices("CPU");
  }
  const int cpus = config::logical_cpu_device_count();
  const int gpus = gpu::device_count();
  for (const std::string& name : names) {
    const Device d = Device::parse(name);
    if (d.type == DeviceType::kCUDA && d.index >= gpus) {
      throw ValueError(std::string(who) + ": device '" + name + "' does not exist: " +
                       (gpus == 0 ? std::string(gpu::built_with_cuda()
                                                    ? "no GPU is visible to this process"
                                                    : "this build of Strata has no CUDA backend")
                                  : "there are " + std::to_string(gpus) + " GPU(s)") +
                       "; use logical CPU devices (/cpu:0, /cpu:1, ...) instead");
    }
    if (d.type == DeviceType::kCPU && d.index >= cpus) {
      throw ValueError(std::string(who) + ": device '" + name + "' does not exist: there are " +
                       std::to_string(cpus) + " logical CPU device(s); call "
                       "config::set_logical_cpu_devices(" + std::to_string(d.index + 1) +
                       ") first");
    }
    for (const Device& seen : devices) {
      if (seen == d) throw ValueError(std::string(who) + ": device '" + name + "' is listed twice");
    }
    devices.push_back(d);
  }
  return devices;
}

}  // namespace strata::distribute
