#include "distribute/cluster/coordination/coordination_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "distribute/cluster/coordination/coordination.grpc.pb.h"
#include "distribute/cluster/coordination/reserved_barriers.h"
#include "distribute/cluster/grpc_security.h"
#include "distribute/cluster/grpc_setup.h"

// Under LeakSanitizer: Debian's c-ares 1.18 (gRPC's DNS resolver) leaks one small block when it
// resolves "localhost" (its built-in localhost answer), in every process that dials a task by
// that name, as the multi-worker tests and strata-launch do. Not Strata's memory, and nothing a
// caller can free: suppressed for that library only. In this file because every program that
// resolves a task's address links it (a suppression in an unreferenced object would be dropped).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_UNDER_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define STRATA_UNDER_LSAN 1
#endif
#ifdef STRATA_UNDER_LSAN
extern "C" const char* __lsan_default_suppressions() { return "leak:libcares.so\n"; }
#endif

namespace strata::distribute {

namespace {

namespace pb = coordination_pb;
using coordination_internal::kConnectBarrier;
using coordination_internal::kMembershipKey;
using coordination_internal::kShutdownBarrier;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string in_ms(milliseconds duration) { return std::to_string(duration.count()) + " ms"; }

uint64_t random_incarnation() {
  std::random_device device;
  std::mt19937_64 generator((uint64_t(device()) << 32) ^ device());
  uint64_t incarnation = 0;
  while (incarnation == 0) incarnation = generator();   // 0 is what an unset field reads as
  return incarnation;
}

// "the coordination service at chief 0 (host:port)": the task hosting it is chief 0, else
// master 0, else worker 0 (cluster_roles.h's coordinator_task).
std::string describe_service(const std::string& address,
                             const std::vector<CoordinationTask>& tasks) {
  for (const char* job : {"chief", "master", "worker"}) {
    for (const CoordinationTask& task : tasks) {
      if (task.job != job || task.index != 0) continue;
      if (task.address == address) return "the coordination service at " + task.name();
      return "the coordination service at " + address + " (hosted by " + task.name() + ")";
    }
  }
  return "the coordination service at " + address;
}

// Pings every 30 s keep the connection known alive through idle stretches (NATs and firewalls
// drop idle connections silently); the service permits them.
std::shared_ptr<grpc::Channel> make_channel(const std::string& address,
                                            const CoordinationOptions& options) {
  ChannelSettings settings;
  settings.max_message_bytes = options.max_message_bytes;
  settings.keepalive_time = std::chrono::milliseconds(30000);
  settings.keepalive_timeout = std::chrono::milliseconds(10000);
  return make_grpc_channel(address, settings);
}

}  // namespace

struct CoordinationClient::Impl {
  Impl(std::string address, CoordinationTask self_task, std::vector<CoordinationTask> all,
       CoordinationOptions opts)
      : self(std::move(self_task)),
        options(opts),
        incarnation(random_incarnation()),
        service(describe_service(address, all)),
        stub(pb::Coordination::NewStub(make_channel(address, opts))) {
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].job == self.job && all[i].index == self.index) self_index = int(i);
    }
  }

  const CoordinationTask self;
  const CoordinationOptions options;
  const uint64_t incarnation;
  const std::string service;   // describe_service()
  const std::unique_ptr<pb::Coordination::Stub> stub;
  const bool tls = loaded_job_security()->uses_tls();
  int self_index = -1;   // in the tasks the service serves

  std::mutex mutex;
  std::condition_variable wake;   // stop_heartbeats()
  bool connected = false;   // registered (and heartbeating)
  bool joined = false;      // connect() saw every task register
  bool stopping = false;
  std::optional<std::string> error;
  std::function<void(const std::string&)> callback;
  bool callback_fired = false;
  uint64_t generation_seen = 0;   // the membership generation of the last heartbeat reply
  std::string finishing;          // HeartbeatResponse::finishing, once one brought it
  grpc::ClientContext* heartbeat_call = nullptr;   // the one in flight, to cancel on stop
  std::thread heartbeats;

  void fill(pb::TaskId* task) const {
    task->set_job(self.job);
    task->set_index(self.index);
    task->set_incarnation(incarnation);
  }

  // Under `mutex`. The first error known stays the job's error.
  void learn(const std::string& message) {
    if (!error) error = message;
  }

  void throw_if_failed(const std::string& operation) {
    std::lock_guard<std::mutex> lock(mutex);
    if (error) throw CoordinationError(operation + " failed: the job has failed: " + *error);
  }

  [[noreturn]] void fail(const std::string& operation, const grpc::Status& status,
                         milliseconds deadline) {
    const std::string& message = status.error_message();
    switch (status.error_code()) {
      case grpc::StatusCode::ABORTED: {   // the posted error (coordination.proto)
        std::lock_guard<std::mutex> lock(mutex);
        learn(message);
        throw CoordinationError(operation + " failed: the job has failed: " + message);
      }
      case grpc::StatusCode::UNAVAILABLE:
        throw CoordinationError(operation + ": " + service + " is unreachable (" + message +
                                "): check that the task hosting it runs and that the cluster "
                                "spec's address for it is right" + tls_hint());
      case grpc::StatusCode::DEADLINE_EXCEEDED:
      case grpc::StatusCode::CANCELLED:
        // The service times waits out itself, with a message naming the key or the tasks; only
        // a service that does not answer at all leaves the call to this client's deadline.
        if (message.rfind(operation, 0) == 0) {
          throw CoordinationError(message);
        }
        throw CoordinationError(operation + ": " + service + " did not answer within " +
                                in_ms(deadline) + ": it hangs, is overloaded or unreachable");
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        // A limit of the service's store (its message names it), or gRPC's message size.
        if (message.rfind(operation, 0) == 0) throw CoordinationError(message);
        throw CoordinationError(operation + ": the request was refused as too large (" + message +
                                "): the service and every task allow " +
                                "CoordinationOptions::max_message_bytes per request; keep "
                                "values small or raise it on all of them alike");
      default:   // INVALID_ARGUMENT, FAILED_PRECONDITION: the service's message names it all
        throw CoordinationError(message.rfind(operation, 0) == 0
                                    ? message
                                    : operation + ": " + message);
    }
  }

  // Under TLS a refused handshake looks like an unreachable service.
  std::string tls_hint() const {
    if (!tls) return "";
    return "; with TLS, also that every task's certificate is signed by the CA the others "
           "trust and names its host as the cluster spec does";
  }

  // Runs `rpc` with a deadline `timeout` away; CoordinationError when it fails.
  template <class Rpc>
  void call(const std::string& operation, milliseconds timeout, Rpc&& rpc) {
    throw_if_failed(operation);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    const grpc::Status status = rpc(&context);
    if (!status.ok()) fail(operation, status, timeout);
  }

  void wait_at_barrier(const std::string& operation, const std::string& id,
                       milliseconds timeout) {
    check_wait(operation, timeout);
    pb::BarrierRequest request;
    fill(request.mutable_task());
    request.set_id(id);
    request.set_timeout_ms(timeout.count());
    pb::BarrierResponse response;
    call(operation, timeout + options.rpc_timeout, [&](grpc::ClientContext* context) {
      return stub->Barrier(context, request, &response);
    });
  }

  // A wait the service takes (kMaxCoordinationWait at most), so the deadline cannot overflow.
  static void check_wait(const std::string& operation, milliseconds timeout) {
    if (timeout < milliseconds(0) || timeout > kMaxCoordinationWait) {
      throw CoordinationError(operation + ": the timeout is " + in_ms(timeout) +
                              "; a wait takes 0 to " + in_ms(kMaxCoordinationWait) + " (7 days)");
    }
  }

  // What a heartbeat reply tells (under `mutex`): the job's error, the membership's
  // generation, why the job is finishing.
  void take(const pb::HeartbeatResponse& response) {
    if (!response.error().empty()) learn(response.error());
    generation_seen = std::max(generation_seen, uint64_t(response.membership_generation()));
    if (!response.finishing().empty() && finishing.empty()) {
      finishing = response.finishing().substr(0, 1024);
    }
  }

  void heartbeat_loop();
  void stop_heartbeats();
};

void CoordinationClient::Impl::heartbeat_loop() {
  Clock::time_point last_answer = Clock::now();
  std::unique_lock<std::mutex> lock(mutex);
  while (!stopping) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::min(options.heartbeat_timeout, options.rpc_timeout));
    heartbeat_call = &context;
    lock.unlock();
    pb::HeartbeatRequest request;
    fill(request.mutable_task());
    pb::HeartbeatResponse response;
    const grpc::Status status = stub->Heartbeat(&context, request, &response);
    lock.lock();
    heartbeat_call = nullptr;
    if (stopping) break;
    if (status.ok()) {
      last_answer = Clock::now();
      take(response);
    } else if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
               status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
               status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      learn("the coordination service refused " + self.name() + "'s heartbeat: " +
            status.error_message());
    } else if (Clock::now() - last_answer >= options.heartbeat_timeout) {
      learn(service + " is unreachable: no heartbeat of " + self.name() + " answered for " +
            in_ms(options.heartbeat_timeout) + " (" + status.error_message() +
            "): the task hosting it died, hangs or is cut off from this one. Restart the job; "
            "BackupAndRestore resumes it from its last backup");
    }
    if (error && callback && !callback_fired) {
      callback_fired = true;
      const auto callback_copy = callback;
      const std::string message = *error;
      lock.unlock();   // the callback may call this client
      callback_copy(message);
      lock.lock();
    }
    wake.wait_for(lock, options.heartbeat_interval, [&] { return stopping; });
  }
}

void CoordinationClient::Impl::stop_heartbeats() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    if (heartbeat_call) heartbeat_call->TryCancel();
  }
  wake.notify_all();
  if (heartbeats.joinable()) heartbeats.join();
}

CoordinationClient::CoordinationClient(std::string service_address, CoordinationTask self,
                                       std::vector<CoordinationTask> tasks,
                                       CoordinationOptions options)
    : impl_(std::make_unique<Impl>(std::move(service_address), std::move(self), std::move(tasks),
                                   options)) {}

CoordinationClient::~CoordinationClient() { impl_->stop_heartbeats(); }

const CoordinationTask& CoordinationClient::self() const { return impl_->self; }

uint64_t CoordinationClient::incarnation() const { return impl_->incarnation; }

void CoordinationClient::connect() {
  const Clock::time_point start = Clock::now();
  const milliseconds timeout = impl_->options.register_timeout;
  bool registered;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->joined) return;
    registered = impl_->connected;   // by an earlier connect() that timed out waiting
  }
  if (!registered) {
    pb::RegisterRequest request;
    impl_->fill(request.mutable_task());
    pb::RegisterResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    context.set_wait_for_ready(true);   // the service may start after this task
    const grpc::Status status = impl_->stub->Register(&context, request, &response);
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      throw CoordinationError("connect: " + impl_->service + " did not answer " +
                              impl_->self.name() + " within " + in_ms(timeout) +
                              ": start that task (it serves the coordination service), check "
                              "its address in the cluster spec, or raise "
                              "CoordinationOptions::register_timeout" + impl_->tls_hint());
    }
    if (status.error_code() == grpc::StatusCode::OUT_OF_RANGE) {
      throw JobFinishedError(status.error_message().substr(0, 1024));
    }
    if (!status.ok()) impl_->fail("connect", status, timeout);
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      impl_->connected = true;
    }
    // Heartbeats start now, not once every task came: the service would otherwise find this
    // task silent while it waits for slower ones.
    impl_->heartbeats = std::thread([this] { impl_->heartbeat_loop(); });
  }
  const auto waited = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  if (impl_->options.elastic_min_tasks > 0) {
    // Elastic: the first membership that holds this task (it joins the one formed before it
    // registered in the next generation).
    uint64_t generation = 0;
    for (;;) {
      const auto left = timeout - std::chrono::duration_cast<milliseconds>(Clock::now() - start);
      const Membership m = membership_after(generation, std::max(milliseconds(0), left));
      if (std::binary_search(m.members.begin(), m.members.end(), impl_->self_index)) break;
      generation = m.generation;
    }
  } else {
    impl_->wait_at_barrier("connect", kConnectBarrier, std::max(milliseconds(0), timeout - waited));
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->joined = true;
}

namespace {

// "<generation>:<member>,<member>,..." as the service publishes it (coordination_membership.cc).
CoordinationClient::Membership parse_membership(const std::string& text) {
  CoordinationClient::Membership m;
  const size_t colon = text.find(':');
  auto number = [&text](size_t from, size_t to, uint64_t* out) {
    const auto [end, ec] = std::from_chars(text.data() + from, text.data() + to, *out);
    return ec == std::errc() && end == text.data() + to && to > from;
  };
  bool ok = colon != std::string::npos && number(0, colon, &m.generation) && m.generation > 0;
  for (size_t from = colon + 1; ok && from < text.size();) {
    size_t to = text.find(',', from);
    if (to == std::string::npos) to = text.size();
    uint64_t member = 0;
    ok = number(from, to, &member) && member < (uint64_t(1) << 30);
    m.members.push_back(int(member));
    from = to + 1;
  }
  if (!ok) {
    throw CoordinationError("membership: the service published '" + text.substr(0, 200) +
                            "', not '<generation>:<member>,...'; every task and the service "
                            "must run the same Strata version");
  }
  return m;
}

}  // namespace

CoordinationClient::Membership CoordinationClient::membership_after(uint64_t generation,
                                                                    milliseconds timeout) {
  if (std::optional<std::string> latest = try_get(kMembershipKey)) {
    Membership m = parse_membership(*latest);
    if (m.generation > generation) return m;
    generation = m.generation;   // a client that fell behind waits for the one after the latest
  }
  const std::string next = std::string(kMembershipKey) + "/" + std::to_string(generation + 1);
  try {
    return parse_membership(get(next, timeout));
  } catch (const CoordinationError& e) {
    const std::string what = e.what();
    if (what.find("timed out") == std::string::npos) throw;
    throw CoordinationError("membership: no membership generation " +
                            std::to_string(generation + 1) + " within " + in_ms(timeout) +
                            (generation == 0 ? ": fewer than elastic_min_tasks tasks registered "
                                               "(start more of the cluster's tasks)"
                                             : ": no task joined or left"));
  }
}

int CoordinationClient::self_index() const { return impl_->self_index; }

uint64_t CoordinationClient::membership_generation_seen() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->generation_seen;
}

void CoordinationClient::report_lost_peer() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->connected || impl_->stopping || impl_->error) return;
  }
  pb::HeartbeatRequest request;
  impl_->fill(request.mutable_task());
  request.set_lost_a_peer(true);
  pb::HeartbeatResponse response;
  grpc::ClientContext context;   // bounded as a heartbeat is: the re-formation waits for it
  context.set_deadline(std::chrono::system_clock::now() +
                       std::min(impl_->options.heartbeat_timeout, impl_->options.rpc_timeout));
  if (!impl_->stub->Heartbeat(&context, request, &response).ok()) return;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->take(response);
}

std::string CoordinationClient::job_finishing() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->finishing;
}

void CoordinationClient::barrier(const std::string& id, milliseconds timeout) {
  const std::string operation = "barrier '" + id + "'";
  if (id.rfind("strata/", 0) == 0) {
    throw CoordinationError(operation + ": ids starting with 'strata/' are reserved for "
                            "connect() and shutdown(); choose another");
  }
  impl_->wait_at_barrier(operation, id, timeout);
}

void CoordinationClient::report_error(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->error) return;   // the job has failed already: the first error stays its error
  }
  pb::ReportErrorRequest request;
  impl_->fill(request.mutable_task());
  request.set_message(message);
  pb::ReportErrorResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + impl_->options.rpc_timeout);
  const grpc::Status status = impl_->stub->ReportError(&context, request, &response);
  if (status.ok()) {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->learn(response.error());
    return;
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->learn(impl_->self.name() + " reported an error (the other tasks could not be told): " +
                 message);
  }
  impl_->fail("report_error", status, impl_->options.rpc_timeout);
}

std::optional<std::string> CoordinationClient::posted_error() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->error;
}

void CoordinationClient::set_error_callback(std::function<void(const std::string&)> callback) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->callback = std::move(callback);
}

void CoordinationClient::shutdown() {
  bool connected;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    connected = impl_->connected;
  }
  try {
    if (connected) {
      impl_->wait_at_barrier("shutdown", kShutdownBarrier, impl_->options.shutdown_timeout);
    }
  } catch (...) {
    impl_->stop_heartbeats();
    throw;
  }
  impl_->stop_heartbeats();
}

void CoordinationClient::set(const std::string& key, const std::string& value) {
  const std::string operation = "set('" + key + "')";
  pb::SetRequest request;
  impl_->fill(request.mutable_task());
  request.set_key(key);
  request.set_value(value);
  // Refused here, with the sizes, rather than by gRPC with a bare RESOURCE_EXHAUSTED.
  if (request.ByteSizeLong() > impl_->options.max_message_bytes) {
    throw CoordinationError(operation + ": the value is " + std::to_string(value.size()) +
                            " bytes, more than CoordinationOptions::max_message_bytes (" +
                            std::to_string(impl_->options.max_message_bytes) +
                            ") allows: the store is for rendezvous data, not tensors; keep "
                            "values small or raise the limit on the service and every task");
  }
  pb::SetResponse response;
  impl_->call(operation, impl_->options.rpc_timeout, [&](grpc::ClientContext* context) {
    return impl_->stub->Set(context, request, &response);
  });
}

std::string CoordinationClient::get(const std::string& key, milliseconds timeout) {
  Impl::check_wait("get('" + key + "')", timeout);
  pb::GetRequest request;
  impl_->fill(request.mutable_task());
  request.set_key(key);
  request.set_wait(true);
  request.set_timeout_ms(timeout.count());
  pb::GetResponse response;
  impl_->call("get('" + key + "')", timeout + impl_->options.rpc_timeout,
              [&](grpc::ClientContext* context) {
                return impl_->stub->Get(context, request, &response);
              });
  return std::move(*response.mutable_value());
}

std::optional<std::string> CoordinationClient::try_get(const std::string& key) {
  pb::GetRequest request;
  impl_->fill(request.mutable_task());
  request.set_key(key);
  pb::GetResponse response;
  impl_->call("try_get('" + key + "')", impl_->options.rpc_timeout,
              [&](grpc::ClientContext* context) {
                return impl_->stub->Get(context, request, &response);
              });
  if (!response.found()) return std::nullopt;
  return std::move(*response.mutable_value());
}

void CoordinationClient::set_many(
    const std::vector<std::pair<std::string, std::string>>& entries) {
  const size_t limit = impl_->options.max_message_bytes / 2;   // room for the framing
  for (size_t k = 0; k < entries.size();) {
    pb::SetManyRequest request;
    impl_->fill(request.mutable_task());
    const size_t first = k;
    size_t bytes = 0;
    while (k < entries.size()) {
      const size_t entry = entries[k].first.size() + entries[k].second.size() + 16;
      if (k > first && bytes + entry > limit) break;
      pb::KeyValue* e = request.add_entries();
      e->set_key(entries[k].first);
      e->set_value(entries[k].second);
      bytes += entry;
      ++k;
    }
    const std::string operation = "set_many(" + std::to_string(k - first) + " keys, from '" +
                                  entries[first].first + "')";
    if (request.ByteSizeLong() > impl_->options.max_message_bytes) {
      throw CoordinationError(operation + ": the value of '" + entries[first].first + "' is " +
                              std::to_string(entries[first].second.size()) +
                              " bytes, more than CoordinationOptions::max_message_bytes (" +
                              std::to_string(impl_->options.max_message_bytes) +
                              ") allows: the store is for rendezvous data, not tensors");
    }
    pb::SetManyResponse response;
    impl_->call(operation, impl_->options.rpc_timeout, [&](grpc::ClientContext* context) {
      return impl_->stub->SetMany(context, request, &response);
    });
  }
}

std::vector<std::string> CoordinationClient::get_many(const std::vector<std::string>& keys,
                                                      milliseconds timeout) {
  const std::string operation = "get_many(" + std::to_string(keys.size()) + " keys)";
  Impl::check_wait(operation, timeout);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const size_t limit = impl_->options.max_message_bytes / 2;
  std::vector<std::string> values(keys.size());
  std::vector<size_t> missing(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) missing[k] = k;
  while (!missing.empty()) {
    // Everything set now: the missing keys in requests within the message limit.
    std::vector<size_t> still;
    for (size_t start = 0; start < missing.size();) {
      pb::GetManyRequest request;
      impl_->fill(request.mutable_task());
      size_t end = start, bytes = 0;
      while (end < missing.size()) {
        const std::string& key = keys[missing[end]];
        if (end > start && bytes + key.size() + 8 > limit) break;
        request.add_keys(key);
        bytes += key.size() + 8;
        ++end;
      }
      pb::GetManyResponse response;
      impl_->call(operation, impl_->options.rpc_timeout, [&](grpc::ClientContext* context) {
        return impl_->stub->GetMany(context, request, &response);
      });
      const int n = request.keys_size();
      if (response.found_size() != n || response.values_size() != n) {
        throw CoordinationError(operation + ": the coordination service answered " +
                                std::to_string(response.found_size()) + " keys for " +
                                std::to_string(n) + ": a service of another version?");
      }
      for (int j = 0; j < n; ++j) {
        const size_t k = missing[start + size_t(j)];
        if (response.found(j)) {
          values[k] = std::move(*response.mutable_values(j));
        } else {
          still.push_back(k);
        }
      }
      start = end;
    }
    missing = std::move(still);
    if (missing.empty()) break;
    // Wait on the service for the first key still missing (a timeout names it), then read
    // whatever else was set meanwhile in one pass.
    const auto left = std::chrono::duration_cast<milliseconds>(deadline -
                                                               std::chrono::steady_clock::now());
    values[missing.front()] = get(keys[missing.front()], std::max(left, milliseconds(0)));
    missing.erase(missing.begin());
  }
  return values;
}

int64_t CoordinationClient::add(const std::string& key, int64_t delta) {
  pb::AddRequest request;
  impl_->fill(request.mutable_task());
  request.set_key(key);
  request.set_delta(delta);
  pb::AddResponse response;
  impl_->call("add('" + key + "')", impl_->options.rpc_timeout,
              [&](grpc::ClientContext* context) {
                return impl_->stub->Add(context, request, &response);
              });
  return response.value();
}

void CoordinationClient::erase(const std::string& key) {
  pb::EraseRequest request;
  impl_->fill(request.mutable_task());
  request.set_key(key);
  pb::EraseResponse response;
  impl_->call("erase('" + key + "')", impl_->options.rpc_timeout,
              [&](grpc::ClientContext* context) {
                return impl_->stub->Erase(context, request, &response);
              });
}

}  // namespace strata::distribute
