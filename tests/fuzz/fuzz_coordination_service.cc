// The coordination service (distribute/cluster/coordination/) against whatever a peer may send:
// each input is a sequence of calls of any of its methods, each with the request's bytes (parsed by
// the service, or refused when they do not parse) and with the job's token, none or a wrong
// one. The service runs in this process, served once through gRPC's in-process channel; each
// input gets a fresh job (three tasks: chief 0, worker 0, worker 1) so that inputs do not depend
// on each other. The calls go out at once, as a job's tasks would send them, and every one must
// be answered: waits the requests ask for are cut to at most 5 ms (a wait outside the range the
// service accepts is left as it is: the service must refuse it), and a call not answered within
// 10 s is a finding (a hang), as is a crash or a sanitizer report.
//
// The seeds are real traffic: what three CoordinationClients send for connect, the key-value
// store, a barrier and shutdown, recorded on the way in, plus one call of each method.
//
// Input format, repeated up to 32 times:
//   op (1 byte) | token (1 byte: 0 the job's, 1 none, 2 a wrong one) |
//   size (2 bytes, little-endian) | payload (size bytes)
// The method is (op & 0x7f) % 10. With op's high bit clear the payload is the request's serialized bytes
// (what the recorded traffic is); with it set, the payload is a recipe (build_request): the
// task, incarnation, key, value and timeout picked from the job's own and a few hostile ones,
// so that mutations reach the job's state (keys that exist, barriers the other tasks meet)
// rather than stopping at a field that does not parse.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distribute/cluster/coordination/coordination_client.h"
#include "distribute/cluster/coordination/coordination_handler.h"
#include "distribute/cluster/coordination/coordination_options.h"
#include "distribute/cluster/grpc_security.h"
#include "distribute/cluster/job_security.h"
#include "fuzz/fuzz_support.h"

namespace {

namespace pb = strata::distribute::coordination_pb;
using strata::distribute::CoordinationOptions;
using strata::distribute::CoordinationTask;
using strata::distribute::coordination_internal::CoordinationHandler;
using strata::distribute::coordination_internal::CoordinationState;
using namespace std::chrono_literals;

constexpr const char* kToken = "fuzz-job-token";
constexpr size_t kMaxCalls = 32;
constexpr int64_t kMaxFuzzWaitMs = 5;

enum Method {
  kRegister, kHeartbeat, kBarrier, kSet, kGet, kAdd, kErase, kReportError, kSetMany, kGetMany,
  kCount
};
constexpr const char* kMethodNames[kCount] = {"Register", "Heartbeat", "Barrier", "Set",
                                              "Get",      "Add",       "Erase",   "ReportError",
                                              "SetMany",  "GetMany"};

std::vector<CoordinationTask> job_tasks() {
  return {{"chief", 0, "localhost:2222"},
          {"worker", 0, "localhost:2223"},
          {"worker", 1, "localhost:2224"}};
}

// Small limits, so that inputs reach them; short heartbeats, so that a task is declared dead
// within an input. `elastic`: the elastic membership (a short grace, so that it forms, and
// tasks leave and join, within an input).
CoordinationOptions fuzz_options(bool elastic) {
  CoordinationOptions options;
  if (elastic) {
    options.elastic_min_tasks = 2;
    options.elastic_grace = 20ms;
  }
  options.heartbeat_timeout = 50ms;
  options.max_message_bytes = 1 << 16;
  options.max_keys = 16;
  options.max_store_bytes = 4096;
  options.max_barriers = 4;
  options.max_waiting_calls = 8;
  return options;
}

// Every method of the service, handed to the current input's handler. The same handler class
// (and token check) as the real service's; only the state behind it changes per input.
class Forwarder final : public pb::Coordination::CallbackService {
 public:
  CoordinationHandler* handler = nullptr;

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* c, const pb::RegisterRequest* q,
                                     pb::RegisterResponse* r) override {
    record(kRegister, *q);
    return forward([&] { return handler->Register(c, q, r); });
  }
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* c,
                                      const pb::HeartbeatRequest* q,
                                      pb::HeartbeatResponse* r) override {
    record(kHeartbeat, *q);
    return forward([&] { return handler->Heartbeat(c, q, r); });
  }
  grpc::ServerUnaryReactor* Barrier(grpc::CallbackServerContext* c, const pb::BarrierRequest* q,
                                    pb::BarrierResponse* r) override {
    record(kBarrier, *q);
    return forward([&] { return handler->Barrier(c, q, r); });
  }
  grpc::ServerUnaryReactor* Set(grpc::CallbackServerContext* c, const pb::SetRequest* q,
                                pb::SetResponse* r) override {
    record(kSet, *q);
    return forward([&] { return handler->Set(c, q, r); });
  }
  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* c, const pb::GetRequest* q,
                                pb::GetResponse* r) override {
    record(kGet, *q);
    return forward([&] { return handler->Get(c, q, r); });
  }
  grpc::ServerUnaryReactor* Add(grpc::CallbackServerContext* c, const pb::AddRequest* q,
                                pb::AddResponse* r) override {
    record(kAdd, *q);
    return forward([&] { return handler->Add(c, q, r); });
  }
  grpc::ServerUnaryReactor* Erase(grpc::CallbackServerContext* c, const pb::EraseRequest* q,
                                  pb::EraseResponse* r) override {
    record(kErase, *q);
    return forward([&] { return handler->Erase(c, q, r); });
  }
  grpc::ServerUnaryReactor* ReportError(grpc::CallbackServerContext* c,
                                        const pb::ReportErrorRequest* q,
                                        pb::ReportErrorResponse* r) override {
    record(kReportError, *q);
    return forward([&] { return handler->ReportError(c, q, r); });
  }
  grpc::ServerUnaryReactor* SetMany(grpc::CallbackServerContext* c, const pb::SetManyRequest* q,
                                    pb::SetManyResponse* r) override {
    record(kSetMany, *q);
    return forward([&] { return handler->SetMany(c, q, r); });
  }
  grpc::ServerUnaryReactor* GetMany(grpc::CallbackServerContext* c, const pb::GetManyRequest* q,
                                    pb::GetManyResponse* r) override {
    record(kGetMany, *q);
    return forward([&] { return handler->GetMany(c, q, r); });
  }

  // Handler calls running now: the state may be destroyed only once none is (a call's answer
  // can reach its client before the handler has let go of the state's lock).
  int in_flight() const { return in_flight_.load(); }

  // While recording (write_seeds): every request as it arrives, in the input format.
  void start_recording() {
    std::lock_guard<std::mutex> lock(mutex_);
    recording_ = true;
  }
  std::vector<std::string> recorded() {
    std::lock_guard<std::mutex> lock(mutex_);
    return records_;
  }

 private:
  template <class F>
  grpc::ServerUnaryReactor* forward(F&& call) {
    ++in_flight_;
    grpc::ServerUnaryReactor* reactor = call();
    --in_flight_;
    return reactor;
  }

  void record(Method method, const google::protobuf::Message& request) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!recording_) return;
    const std::string bytes = request.SerializeAsString();
    std::string record = {char(method), char(0), char(bytes.size() & 0xff),
                          char((bytes.size() >> 8) & 0xff)};
    records_.push_back(record + bytes.substr(0, 0xffff));
  }

  std::atomic<int> in_flight_{0};
  std::mutex mutex_;
  bool recording_ = false;
  std::vector<std::string> records_;
};

// The service, served once for the whole run, and an in-process channel to it.
struct Fixture {
  Forwarder forwarder;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<grpc::GenericStub> stub;

  explicit Fixture(const std::string& listen = "") {
    // The job's token, as every task of a job with one has it.
    strata::distribute::JobSecurity security;
    security.token_file = strata::fuzz::scratch_file(
        reinterpret_cast<const uint8_t*>(kToken), std::char_traits<char>::length(kToken));
    strata::distribute::set_job_security(security);

    grpc::ServerBuilder builder;
    int port = 0;
    if (!listen.empty()) builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&forwarder);
    builder.SetMaxReceiveMessageSize(fuzz_options(false).max_message_bytes);
    server = builder.BuildAndStart();
    if (!server) {
      std::fprintf(stderr, "fuzz_coordination_service: the gRPC server did not start\n");
      std::abort();
    }
    bound_port = port;
    stub = std::make_unique<grpc::GenericStub>(server->InProcessChannel(grpc::ChannelArguments()));
  }
  int bound_port = 0;
};

// A request parsed as its method's message, its waits cut to kMaxFuzzWaitMs; the bytes as given
// when they do not parse (the service must refuse those itself).
std::string prepared_request(int method, const std::string& bytes) {
  const auto cut = [](int64_t ms) {
    const bool accepted = ms >= 0 && ms <= strata::distribute::kMaxCoordinationWait.count();
    return accepted ? ms % (kMaxFuzzWaitMs + 1) : ms;
  };
  if (method == kBarrier) {
    pb::BarrierRequest request;
    if (!request.ParseFromString(bytes)) return bytes;
    request.set_timeout_ms(cut(request.timeout_ms()));
    return request.SerializeAsString();
  }
  if (method == kGet) {
    pb::GetRequest request;
    if (!request.ParseFromString(bytes)) return bytes;
    request.set_timeout_ms(cut(request.timeout_ms()));
    return request.SerializeAsString();
  }
  return bytes;
}

// Reads a recipe's bytes; zeros once they run out.
class Recipe {
 public:
  Recipe(const std::string& bytes) : bytes_(bytes) {}
  uint8_t byte() { return at_ < bytes_.size() ? uint8_t(bytes_[at_++]) : 0; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return v;
  }
  std::string bytes(size_t n) {
    n = std::min(n, bytes_.size() - at_);
    std::string out = bytes_.substr(at_, n);
    at_ += n;
    return out;
  }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
};

// The job's three tasks register with these incarnations in the recipes' seeds.
uint64_t incarnation_of(int task) { return 1000 + uint64_t(task); }

void fill_task(Recipe& r, pb::TaskId* task, bool* present) {
  const uint8_t who = r.byte();
  const std::vector<CoordinationTask> tasks = job_tasks();
  *present = who % 6 != 5;
  if (!*present) return;
  if (who % 6 < 3) {
    task->set_job(tasks[who % 6].job);
    task->set_index(tasks[who % 6].index);
  } else if (who % 6 == 3) {
    task->set_job("ps");      // not in the cluster
    task->set_index(0);
  } else {
    task->set_job(r.bytes(r.byte()));   // anything
    task->set_index(int32_t(r.u64()));
  }
  switch (r.byte() % 4) {
    case 0: task->set_incarnation(incarnation_of(who % 6 < 3 ? who % 6 : 0)); break;
    case 1: task->set_incarnation(2000 + who % 3); break;   // a "restarted" process
    case 2: task->set_incarnation(0); break;
    default: task->set_incarnation(r.u64());
  }
}

std::string pick_name(Recipe& r, bool barrier) {
  static const char* kKeys[] = {"gloo/rank_0", "gloo/rank_1", "counter", "nccl/0/unique_id"};
  static const char* kIds[] = {"epoch", "step", "strata/connect", "strata/shutdown"};
  const uint8_t choice = r.byte();
  switch (choice % 7) {
    case 0: case 1: case 2: case 3: return barrier ? kIds[choice % 4] : kKeys[choice % 4];
    case 4: return "";
    case 5: return std::string(4097, 'k');   // one byte over the limit
    default: return r.bytes(r.byte() | (size_t(r.byte()) << 8));
  }
}

int64_t pick_timeout(Recipe& r) {
  switch (r.byte() % 6) {
    case 0: return 0;
    case 1: case 2: return 1 + r.byte() % kMaxFuzzWaitMs;
    case 3: return -1;
    case 4: return strata::distribute::kMaxCoordinationWait.count() + 1;
    default: return int64_t(r.u64());
  }
}

std::string pick_value(Recipe& r) {
  switch (r.byte() % 4) {
    case 0: return "41";
    case 1: return std::string(r.byte() * 16 + 1, 'v');   // up to 4 KiB: fills the store
    case 2: return "-9223372036854775808";
    default: return r.bytes(r.byte());
  }
}

int64_t pick_delta(Recipe& r) {
  switch (r.byte() % 4) {
    case 0: return 1;
    case 1: return std::numeric_limits<int64_t>::max();
    case 2: return std::numeric_limits<int64_t>::min();
    default: return int64_t(r.u64());
  }
}

// The request a recipe describes, serialized.
std::string build_request(int method, const std::string& recipe) {
  Recipe r(recipe);
  pb::TaskId task;
  bool present = true;
  fill_task(r, &task, &present);
  const auto with_task = [&](auto& request) {
    if (present) *request.mutable_task() = task;
    return request.SerializeAsString();
  };
  switch (method) {
    case kRegister: { pb::RegisterRequest q; return with_task(q); }
    case kHeartbeat: { pb::HeartbeatRequest q; return with_task(q); }
    case kBarrier: {
      pb::BarrierRequest q;
      q.set_id(pick_name(r, true));
      q.set_timeout_ms(pick_timeout(r));
      return with_task(q);
    }
    case kSet: {
      pb::SetRequest q;
      q.set_key(pick_name(r, false));
      q.set_value(pick_value(r));
      return with_task(q);
    }
    case kGet: {
      pb::GetRequest q;
      q.set_key(pick_name(r, false));
      q.set_wait(r.byte() % 2 == 0);
      q.set_timeout_ms(pick_timeout(r));
      return with_task(q);
    }
    case kAdd: {
      pb::AddRequest q;
      q.set_key(pick_name(r, false));
      q.set_delta(pick_delta(r));
      return with_task(q);
    }
    case kErase: {
      pb::EraseRequest q;
      q.set_key(pick_name(r, false));
      return with_task(q);
    }
    case kSetMany: {
      pb::SetManyRequest q;
      for (int n = r.byte() % 5; n > 0; --n) {
        pb::KeyValue* e = q.add_entries();
        e->set_key(pick_name(r, false));
        e->set_value(pick_value(r));
      }
      return with_task(q);
    }
    case kGetMany: {
      pb::GetManyRequest q;
      for (int n = r.byte() % 5; n > 0; --n) q.add_keys(pick_name(r, false));
      return with_task(q);
    }
    default: {
      pb::ReportErrorRequest q;
      q.set_message(r.bytes(r.byte() | (size_t(r.byte()) << 8)));
      return with_task(q);
    }
  }
}

struct Call {
  grpc::ClientContext context;
  grpc::ByteBuffer request, response;
};

// Sends every call of the input at once and waits until each is answered.
void run_input(Fixture& fixture, const uint8_t* data, size_t size) {
  // Odd-sized inputs run against an elastic membership, even-sized ones against a fixed one.
  auto state = std::make_unique<CoordinationState>(job_tasks(), fuzz_options(size % 2 == 1));
  CoordinationHandler handler(*state);
  fixture.forwarder.handler = &handler;

  std::mutex mutex;
  std::condition_variable answered;
  size_t pending = 0;
  std::vector<std::unique_ptr<Call>> calls;
  size_t at = 0;
  while (at + 4 <= size && calls.size() < kMaxCalls) {
    const bool recipe = data[at] & 0x80;
    const int method = (data[at] & 0x7f) % kCount;
    const int token = data[at + 1] % 3;
    const size_t length = std::min<size_t>(data[at + 2] | (size_t(data[at + 3]) << 8),
                                           size - at - 4);
    const std::string bytes(reinterpret_cast<const char*>(data + at + 4), length);
    at += 4 + length;

    auto call = std::make_unique<Call>();
    call->context.set_deadline(std::chrono::system_clock::now() + 30s);
    if (token == 0) call->context.AddMetadata(strata::distribute::kJobTokenMetadataKey, kToken);
    if (token == 2) call->context.AddMetadata(strata::distribute::kJobTokenMetadataKey, "guess");
    const std::string request =
        prepared_request(method, recipe ? build_request(method, bytes) : bytes);
    grpc::Slice slice(request);
    call->request = grpc::ByteBuffer(&slice, 1);
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++pending;
    }
    fixture.stub->UnaryCall(&call->context,
                            std::string("/") + pb::Coordination::service_full_name() + "/" +
                                kMethodNames[method],
                            grpc::StubOptions(), &call->request, &call->response,
                            [&](grpc::Status) {
                              std::lock_guard<std::mutex> lock(mutex);
                              --pending;
                              answered.notify_all();
                            });
    calls.push_back(std::move(call));
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    if (!answered.wait_for(lock, 10s, [&] { return pending == 0; })) {
      std::fprintf(stderr, "fuzz_coordination_service: %zu of %zu calls not answered in 10 s\n",
                   pending, calls.size());
      std::abort();
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (fixture.forwarder.in_flight() > 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "fuzz_coordination_service: a handler did not return in 10 s\n");
      std::abort();
    }
    std::this_thread::yield();
  }
  state->stop();  // nothing parked is left: every call was answered
  fixture.forwarder.handler = nullptr;
}

// One client's worth of a real job, through the real client, against `address`.
void real_task(const std::string& address, int which, std::vector<CoordinationTask> tasks) {
  CoordinationOptions options;
  options.heartbeat_interval = 100ms;
  options.register_timeout = 20s;
  options.rpc_timeout = 10s;
  strata::distribute::CoordinationClient client(address, tasks[size_t(which)], tasks, options);
  client.connect();
  if (which == 0) {
    client.set("gloo/rank_0", std::string("\x0a\x00\x00\x01\x4e\x20", 6));
    client.set("nccl/0/unique_id", std::string(128, '\x7f'));
  } else {
    client.get("gloo/rank_0", 10s);
    (void)client.try_get("nccl/0/unique_id");
  }
  // A pair-keyed rendezvous: every task publishes one key per peer and reads its peers'.
  std::vector<std::pair<std::string, std::string>> mine;
  std::vector<std::string> theirs;
  for (int peer = 0; peer < 3; ++peer) {
    if (peer == which) continue;
    mine.emplace_back("g/pair/" + std::to_string(which) + "/" + std::to_string(peer), "0a0b");
    theirs.push_back("g/pair/" + std::to_string(peer) + "/" + std::to_string(which));
  }
  client.set_many(mine);
  (void)client.get_many(theirs, 10s);
  client.add("arrivals", 1);
  client.barrier("epoch_end", 10s);
  if (which == 0) client.erase("gloo/rank_0");
  client.shutdown();
}

}  // namespace

namespace strata::fuzz {

// Records what a real three-task job sends (a service on a loopback port, the clients of
// CoordinationClient), and writes it whole and call by call.
void write_seeds(const std::string& dir) {
  Fixture fixture("127.0.0.1:0");
  auto state = std::make_unique<CoordinationState>(job_tasks(), CoordinationOptions());
  CoordinationHandler handler(*state);
  fixture.forwarder.handler = &handler;
  fixture.forwarder.start_recording();
  const std::string address = "127.0.0.1:" + std::to_string(fixture.bound_port);
  std::vector<std::future<void>> tasks;
  for (int i = 0; i < 3; ++i) {
    tasks.push_back(std::async(std::launch::async, real_task, address, i, job_tasks()));
  }
  for (auto& t : tasks) t.get();
  std::vector<std::string> records = fixture.forwarder.recorded();
  state->stop();
  fixture.server->Shutdown(std::chrono::system_clock::now() + 1s);

  std::string job, without_heartbeats;
  size_t kept = 0;
  for (const std::string& r : records) {
    if (kept < kMaxCalls) job += r, ++kept;
  }
  write_seed(dir, "real_job", job);
  kept = 0;
  bool seen[kCount] = {};
  for (const std::string& r : records) {
    const int method = r[0];
    if (method != kHeartbeat && kept < kMaxCalls) without_heartbeats += r, ++kept;
    if (!seen[method]) {
      seen[method] = true;
      write_seed(dir, std::string("one_") + kMethodNames[method], r);
    }
  }
  write_seed(dir, "real_job_without_heartbeats", without_heartbeats);
  // A report of an error (a real job of this seed's kind never sends one) after a register.
  pb::ReportErrorRequest report;
  report.mutable_task()->set_job("worker");
  report.mutable_task()->set_index(1);
  report.mutable_task()->set_incarnation(99);
  report.set_message("out of disk space");
  pb::RegisterRequest reg;
  *reg.mutable_task() = report.task();
  const auto record = [](Method m, const std::string& bytes) {
    return std::string{char(m), char(0), char(bytes.size() & 0xff), char(bytes.size() >> 8)} +
           bytes;
  };
  write_seed(dir, "report_error",
             record(kRegister, reg.SerializeAsString()) +
                 record(kReportError, report.SerializeAsString()));

  // Recipes (op's high bit): the three tasks register with their incarnations and meet at the
  // connect barrier, then use the store, meet at a barrier and leave; and the same job with one
  // task's error posted halfway.
  const auto recipe = [](Method m, std::initializer_list<uint8_t> bytes) {
    const std::string payload(bytes.begin(), bytes.end());
    return std::string{char(0x80 | m), char(0), char(payload.size()), char(0)} + payload;
  };
  std::string connect;
  for (uint8_t t = 0; t < 3; ++t) connect += recipe(kRegister, {t, 0});
  for (uint8_t t = 0; t < 3; ++t) connect += recipe(kBarrier, {t, 0, 2, 1, 4});  // strata/connect
  std::string work = connect;
  work += recipe(kSet, {0, 0, 0, 0});                 // chief 0 sets gloo/rank_0 = "41"
  work += recipe(kGet, {1, 0, 0, 0, 1, 4});           // worker 0 waits for it
  work += recipe(kAdd, {2, 0, 2, 0});                 // worker 1 adds 1 to counter
  work += recipe(kAdd, {0, 0, 2, 1});                 // chief 0 adds INT64_MAX: overflow
  work += recipe(kErase, {1, 0, 0});
  for (uint8_t t = 0; t < 3; ++t) work += recipe(kBarrier, {t, 0, 0, 1, 4});      // epoch
  for (uint8_t t = 0; t < 3; ++t) work += recipe(kHeartbeat, {t, 0});
  std::string leave = work;
  for (uint8_t t = 0; t < 3; ++t) leave += recipe(kBarrier, {t, 0, 3, 1, 4});     // shutdown
  write_seed(dir, "recipe_job", leave);
  std::string failing = work;
  failing += recipe(kReportError, {1, 0, 5, 0, 'o', 'o', 'p', 's', '!'});
  failing += recipe(kSet, {2, 0, 1, 0});
  failing += recipe(kRegister, {1, 1});               // worker 0 "restarted"
  write_seed(dir, "recipe_job_fails", failing);
  std::string full = connect;
  for (uint8_t k = 0; k < 20; ++k) full += recipe(kSet, {uint8_t(k % 3), 0, 6, 2, 0, k, 1, 255});
  write_seed(dir, "recipe_store_fills", full);
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();  // reachable for ever: served once for the run
  run_input(*fixture, data, size);
  return 0;
}
