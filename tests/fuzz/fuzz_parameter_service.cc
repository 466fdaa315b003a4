// The parameter service (distribute/parameter_server/wire/parameter_service.h) as a peer reaches
// it: a ps task's server, started once in this process on a loopback port with a small message
// bound (64 KiB, so no input can legitimately make it allocate much), is sent each input as a
// sequence of raw request messages through gRPC's generic stub. The bytes are not parsed here:
// the server's own deserialisation sees them as a peer's bytes.
//
// Input: records of [method byte][length, 2 bytes little-endian][that many bytes]; the method
// is the byte modulo 8 (kMethods). Each input starts from an empty ps (clear_variables), so a
// sequence creates variables and then reads, pushes and assigns them. Besides a crash, a
// sanitizer report, a leak, a hang or > 2 GiB, a finding is
//   - a call that fails UNAVAILABLE or DEADLINE_EXCEEDED (the ps died or hung),
//   - INTERNAL for a request that parses (a handler threw something other than strata::Error),
//   - a Ping after the input that fails.
//
// Seeds are real traffic: write_seeds records, with a gRPC client interceptor, every request a
// small training run sends (a ShardedVariable embedding table of two RemoteVariable shards and a
// dense kernel on one ps, SGD with momentum by rows and Adam, the step counts claimed by
// FetchAdd, assignments, a worker's batched step (assignments and updates in one ApplyUpdate),
// an attach, a ping and a shutdown) and writes them as inputs.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/partitioners.h"
#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/parameter_server.pb.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/remote_step.h"
#include "fuzz/fuzz_support.h"

namespace {

namespace pb = strata::distribute::parameter_server_pb;
using strata::distribute::ParameterServer;
using strata::distribute::ParameterServerOptions;

constexpr const char* kService = "/strata.distribute.parameter_server_pb.ParameterService/";
constexpr const char* kMethods[] = {"CreateVariable", "Read",     "ReadRows", "ApplyUpdate",
                                    "Assign",         "FetchAdd", "Ping",     "Shutdown"};
constexpr size_t kNumMethods = sizeof(kMethods) / sizeof(kMethods[0]);
constexpr size_t kMaxMessageBytes = size_t(64) << 10;

ParameterServerOptions fuzz_options() {
  ParameterServerOptions options;
  options.max_message_bytes = kMaxMessageBytes;
  options.rpc_timeout = std::chrono::seconds(10);
  return options;
}

// Whether `bytes` parse as method `m`'s request.
bool parses(size_t m, const std::string& bytes) {
  switch (m) {
    case 0: return pb::CreateVariableRequest().ParseFromString(bytes);
    case 1: return pb::ReadRequest().ParseFromString(bytes);
    case 2: return pb::ReadRowsRequest().ParseFromString(bytes);
    case 3: return pb::ApplyUpdateRequest().ParseFromString(bytes);
    case 4: return pb::AssignRequest().ParseFromString(bytes);
    case 5: return pb::FetchAddRequest().ParseFromString(bytes);
    case 6: return pb::PingRequest().ParseFromString(bytes);
    default: return pb::ShutdownRequest().ParseFromString(bytes);
  }
}

// The ps and a channel to it, made on the first input and kept for the whole run.
struct Target {
  std::unique_ptr<ParameterServer> server = ParameterServer::start("127.0.0.1:0", fuzz_options());
  grpc::GenericStub stub{grpc::CreateChannel("127.0.0.1:" + std::to_string(server->port()),
                                             grpc::InsecureChannelCredentials())};

  grpc::Status call(size_t m, const std::string& bytes) {
    grpc::Slice slice(bytes.data(), bytes.size());
    const grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, std::string(kService) + kMethods[m], grpc::StubOptions(), &request,
                   &response, [&done](grpc::Status status) { done.set_value(status); });
    return done.get_future().get();
  }
};

Target& target() {
  static Target* t = new Target();   // never destroyed: gRPC's threads outlive main's statics
  return *t;
}

[[noreturn]] void finding(const char* what, size_t m, const grpc::Status& status) {
  std::fprintf(stderr, "fuzz_parameter_service: %s: %s answered %d: %s\n", what, kMethods[m],
               int(status.error_code()), status.error_message().c_str());
  std::abort();
}

// The records of one input.
std::vector<std::pair<size_t, std::string>> records(const uint8_t* data, size_t size) {
  std::vector<std::pair<size_t, std::string>> out;
  size_t at = 0;
  while (at + 3 <= size) {
    const size_t m = data[at] % kNumMethods;
    const size_t n = size_t(data[at + 1]) | (size_t(data[at + 2]) << 8);
    at += 3;
    const size_t take = std::min(n, size - at);
    out.emplace_back(m, std::string(reinterpret_cast<const char*>(data + at), take));
    at += take;
  }
  return out;
}

std::string record(size_t m, const std::string& bytes) {
  const size_t n = std::min(bytes.size(), size_t(0xffff));
  std::string out;
  out += char(m);
  out += char(n & 0xff);
  out += char(n >> 8);
  return out + bytes.substr(0, n);
}

// --- Seeds: the requests of a real training run, recorded by a client interceptor. ---

struct Recorded {
  size_t method;
  std::string bytes;
};
std::mutex g_recorded_mutex;
std::vector<Recorded> g_recorded;

class Recorder final : public grpc::experimental::Interceptor {
 public:
  explicit Recorder(grpc::experimental::ClientRpcInfo* info) : method_(info->method()) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      record(methods->GetSerializedSendMessage());
    }
    methods->Proceed();
  }

 private:
  void record(const grpc::ByteBuffer* buffer) {
    if (buffer == nullptr || method_.rfind(kService, 0) != 0) return;
    const std::string name = method_.substr(std::string(kService).size());
    std::vector<grpc::Slice> slices;
    if (!buffer->Dump(&slices).ok()) return;
    std::string bytes;
    for (const grpc::Slice& s : slices) {
      bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    for (size_t m = 0; m < kNumMethods; ++m) {
      if (name == kMethods[m]) {
        std::lock_guard<std::mutex> lock(g_recorded_mutex);
        g_recorded.push_back({m, std::move(bytes)});
        return;
      }
    }
  }
  std::string method_;
};

class RecorderFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    return new Recorder(info);
  }
};

// A small parameter-server training run on one ps in this process; every request recorded.
void train_on_one_ps() {
  using namespace strata;
  using namespace strata::distribute;
  std::unique_ptr<ParameterServer> ps = ParameterServer::start("127.0.0.1:0", fuzz_options());
  const std::string address = "127.0.0.1:" + std::to_string(ps->port());
  const ClusterSpec cluster(std::map<std::string, std::vector<std::string>>{
      {"ps", {address}}, {"worker", {"localhost:1"}}});
  ParameterServerStrategy strategy(cluster, std::make_shared<FixedShardsPartitioner>(2),
                                   fuzz_options());
  auto scope = strategy.scope();
  VariableSpec table_spec{"embedding/table", {6, 3}, float32};
  table_spec.initial_value = random_uniform({6, 3}, -1, 1, float32, 5);
  VariablePtr table = create_variable(table_spec);
  VariableSpec kernel_spec{"dense/kernel", {3, 2}, float32};
  kernel_spec.initial_value = random_uniform({3, 2}, -1, 1, float32, 6);
  VariablePtr kernel = create_variable(kernel_spec);
  optimizers::SGD sgd(0.1, 0.9);
  optimizers::Adam adam(0.01);
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{4, 1, 4}, Shape{3});
  for (int step = 0; step < 2; ++step) {
    GradientTape tape;
    const Tensor loss = reduce_sum(square(matmul(table->gather(ids), kernel->value())));
    const std::vector<Gradient> g = tape.gradient_with_slices(loss, {table, kernel});
    sgd.apply_gradients(std::vector<Gradient>{g[0]}, {table});
    adam.apply_gradients(std::vector<Gradient>{g[1]}, {kernel});
  }
  {
    // A worker's step (remote_step.h): its assignments and updates in one ApplyUpdate.
    RemoteStep batched(nullptr);
    GradientTape tape;
    const Tensor loss = reduce_sum(square(matmul(table->gather(ids), kernel->value())));
    const std::vector<Gradient> g = tape.gradient_with_slices(loss, {table, kernel});
    kernel->assign_add(full({3, 2}, 0.5, float32));
    sgd.apply_gradients(std::vector<Gradient>{g[0]}, {table});
    adam.apply_gradients(std::vector<Gradient>{g[1]}, {kernel});
    batched.finish();
  }
  kernel->assign_add(ones({3, 2}));
  kernel->assign_sub(ones({3, 2}));
  table->assign(zeros({6, 3}));
  // A restore sets the step counts (BackupAndRestore assigns them; an int64 add as well).
  sgd.iterations()->assign(Tensor::scalar<int64_t>(7));
  adam.iterations()->assign_add(Tensor::scalar<int64_t>(1));
  ParameterClient client("/job:ps/replica:0/task:0", address, fuzz_options());
  // A worker attaching to what the coordinator made (shape and dtype only).
  client.attach_variable("dense/kernel/part_0", "dense/kernel/part_0", Shape{2, 2}, float32);
  client.ping();
  client.shutdown();
}

}  // namespace

namespace strata::fuzz {

void write_seeds(const std::string& dir) {
  static RecorderFactory factory;
  grpc::experimental::RegisterGlobalClientInterceptorFactory(&factory);
  train_on_one_ps();
  std::lock_guard<std::mutex> lock(g_recorded_mutex);
  if (g_recorded.empty()) throw std::runtime_error("no ParameterService request was recorded");
  // The whole run as one input, and each request after the variables' creation.
  std::string creates, all;
  for (const Recorded& r : g_recorded) {
    all += record(r.method, r.bytes);
    if (r.method == 0) creates += record(r.method, r.bytes);
  }
  write_seed(dir, "training_run", all);
  std::set<std::string> seen;
  for (const Recorded& r : g_recorded) {
    if (r.method == 0) continue;
    const std::string input = creates + record(r.method, r.bytes);
    if (!seen.insert(input).second) continue;
    write_seed(dir, std::string(kMethods[r.method]) + "_" + std::to_string(seen.size()), input);
  }
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // STRATA_FUZZ_TRACE=1 prints each call's answer (to read what an input does).
  static const bool trace = std::getenv("STRATA_FUZZ_TRACE") != nullptr;
  Target& t = target();
  t.server->clear_variables();
  for (const auto& [m, bytes] : records(data, size)) {
    const grpc::Status status = t.call(m, bytes);
    if (trace) {
      std::fprintf(stderr, "%s (%zu bytes): %d %s\n", kMethods[m], bytes.size(),
                   int(status.error_code()), status.error_message().c_str());
    }
    switch (status.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
      case grpc::StatusCode::DEADLINE_EXCEEDED: finding("the ps stopped answering", m, status);
      case grpc::StatusCode::INTERNAL:
        if (parses(m, bytes)) finding("a handler failed with INTERNAL", m, status);
        break;
      default: break;
    }
  }
  const grpc::Status ping = t.call(6, "");
  if (!ping.ok()) finding("the ps no longer answers a Ping", 6, ping);
  return 0;
}
