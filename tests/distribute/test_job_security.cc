// Only the job's members steer the job (distribute/cluster/job_security.h): the job token checked
// by the coordination service, the ps server and the worker server (each refuses an outsider's call
// as UNAUTHENTICATED naming the caller); the token and TLS files checked when they are read; every
// server listening on its own task's address unless every interface is asked for.
//
// Outsiders are played by gRPC channels of the test's own (job_security_test_util.h): what a
// process outside the job can send, with no token or another one.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include "distribute/cluster/coordination/coordination.grpc.pb.h"
#include "distribute/cluster/coordination/coordination_client.h"
#include "distribute/cluster/coordination/coordination_service.h"
#include "distribute/cluster/grpc_security.h"
#include "distribute/cluster/resolvers/cluster_resolver.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/parameter_server.grpc.pb.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/worker_client.h"
#include "distribute/parameter_server/wire/worker_service.grpc.pb.h"
#include "distribute/parameter_server/wire/worker_service.h"
#include "distribute/worker_cluster.h"
#include "tests/distribute/job_security_test_util.h"
#include "tests/distribute/worker_processes.h"

namespace strata::testing {
namespace {

using namespace distribute;
using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The message of the ValueError `f` throws ("" and a failure when it throws none).
template <class F>
std::string value_error_of(F&& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ValueError";
  return "";
}

JobSecurity with_token(const std::string& file) {
  JobSecurity security;
  security.token_file = file;
  return security;
}

// ---- the settings and their files ----

TEST(JobSecuritySettings, TokenFileProblemsNameTheFileAndTheFix) {
  ScratchDir dir("token_files");
  const std::string missing = dir.path("missing");
  std::string message = value_error_of([&] { load_job_security(with_token(missing)); });
  EXPECT_TRUE(contains(message, "the job token file '" + missing + "'")) << message;
  EXPECT_TRUE(contains(message, "STRATA_JOB_TOKEN_FILE, --job_token_file")) << message;
  EXPECT_TRUE(contains(message, "cannot be read: No such file")) << message;
  EXPECT_TRUE(contains(message, "openssl rand -hex 32")) << message;

  message = value_error_of([&] { load_job_security(with_token(dir.write("empty", ""))); });
  EXPECT_TRUE(contains(message, "'" + dir.path("empty") + "'") && contains(message, "is empty"))
      << message;
  message = value_error_of([&] { load_job_security(with_token(dir.write("blank", " \n\n"))); });
  EXPECT_TRUE(contains(message, "only white space")) << message;
  message = value_error_of(
      [&] { load_job_security(with_token(dir.write("binary", std::string("ab\0cd", 5)))); });
  EXPECT_TRUE(contains(message, "not printable ASCII (0 at offset 2)")) << message;
  message = value_error_of(
      [&] { load_job_security(with_token(dir.write("huge", std::string(5000, 'x')))); });
  EXPECT_TRUE(contains(message, "larger than 4096 bytes")) << message;
  message = value_error_of([&] { load_job_security(with_token(dir.path(""))); });
  EXPECT_TRUE(contains(message, "cannot be read")) << message;  // a folder
}

TEST(JobSecuritySettings, TokenIsTheFilesTextWithoutSurroundingWhiteSpace) {
  ScratchDir dir("token_trim");
  const auto loaded = load_job_security(with_token(dir.write("token", "  s3cr3t token\n")));
  EXPECT_EQ(loaded->token, "s3cr3t token");
  EXPECT_FALSE(loaded->uses_tls());
  EXPECT_TRUE(load_job_security(JobSecurity{})->token.empty());
}

TEST(JobSecuritySettings, TlsNeedsAllThreePemFiles) {
  ScratchDir dir("tls_files");
  JobSecurity security;
  security.tls_cert_file = dir.write("cert.pem", "-----BEGIN CERTIFICATE-----\nx\n");
  security.tls_key_file = dir.write("key.pem", "-----BEGIN PRIVATE KEY-----\nx\n");
  std::string message = value_error_of([&] { load_job_security(security); });
  EXPECT_TRUE(contains(message, "STRATA_TLS_CA_FILE (--tls_ca_file) is not set")) << message;
  security.tls_ca_file = dir.write("ca.pem", "not a certificate");
  message = value_error_of([&] { load_job_security(security); });
  EXPECT_TRUE(contains(message, "the TLS CA file '" + dir.path("ca.pem") + "'")) << message;
  EXPECT_TRUE(contains(message, "is not PEM")) << message;
  security.tls_ca_file = dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\nx\n");
  EXPECT_TRUE(load_job_security(security)->uses_tls());
}

TEST(JobSecuritySettings, BindHost) {
  JobSecurity security;
  security.bind_host = "0.0.0.0:2222";
  EXPECT_TRUE(contains(value_error_of([&] { load_job_security(security); }), "without a port"));
  security.bind_host = "[::]";
  EXPECT_EQ(load_job_security(security)->settings.bind_host, "::");
  EXPECT_EQ(bind_address_for("host1:2222", ""), "host1:2222");
  EXPECT_EQ(bind_address_for("host1:2222", "0.0.0.0"), "0.0.0.0:2222");
  EXPECT_EQ(bind_address_for("[::1]:2222", "::"), "[::]:2222");
  EXPECT_EQ(bind_address_for("localhost:0", "10.1.2.3"), "10.1.2.3:0");
}

TEST(JobSecuritySettings, FromTheEnvironmentUnlessSet) {
  ScratchDir dir("token_env");
  const std::string file = dir.write("token", "from-env\n");
  setenv(kJobTokenFileEnv, file.c_str(), 1);
  setenv(kBindHostEnv, "0.0.0.0", 1);
  reset_job_security();
  EXPECT_EQ(job_security().token_file, file);
  EXPECT_EQ(loaded_job_security()->token, "from-env");
  EXPECT_EQ(loaded_job_security()->settings.bind_host, "0.0.0.0");
  {
    ScopedJobSecurity set(with_token(dir.write("other", "from-flag")));
    EXPECT_EQ(loaded_job_security()->token, "from-flag");
  }
  unsetenv(kJobTokenFileEnv);
  unsetenv(kBindHostEnv);
  reset_job_security();
  EXPECT_TRUE(loaded_job_security()->token.empty());
}

TEST(JobSecuritySettings, ABrokenTokenFileStopsTheFirstChannelNamingIt) {
  setenv(kJobTokenFileEnv, "/nonexistent/strata/token", 1);
  reset_job_security();
  const std::vector<CoordinationTask> tasks = {{"worker", 0, "localhost:1"}};
  const std::string message =
      value_error_of([&] { CoordinationClient client("localhost:1", tasks[0], tasks); });
  EXPECT_TRUE(contains(message, "'/nonexistent/strata/token'")) << message;
  unsetenv(kJobTokenFileEnv);
  reset_job_security();
}

TEST(JobSecuritySettings, TokensCompareWholly) {
  EXPECT_TRUE(same_token("abc", "abc"));
  EXPECT_FALSE(same_token("abd", "abc"));
  EXPECT_FALSE(same_token("ab", "abc"));
  EXPECT_FALSE(same_token("abcd", "abc"));
  EXPECT_FALSE(same_token("", "abc"));
}

// ---- the token on each service ----

// A job token set for the test's process: every server and channel it makes uses it.
struct TokenJob {
  ScratchDir dir{"job_token"};
  std::string token = "the-job-token-0123456789";
  ScopedJobSecurity security{with_token(dir.write("token", token + "\n"))};
};

std::vector<CoordinationTask> two_workers() {
  return {{"worker", 0, "localhost:20000"}, {"worker", 1, "localhost:20001"}};
}

CoordinationOptions coordination_options() {
  CoordinationOptions options;
  options.heartbeat_interval = 100ms;
  options.heartbeat_timeout = 5000ms;
  options.register_timeout = 20000ms;
  options.shutdown_timeout = 20000ms;
  options.rpc_timeout = 10000ms;
  return options;
}

// Two connected CoordinationClients of worker 0 and 1 over a service on 127.0.0.1.
struct CoordinationJob {
  std::vector<CoordinationTask> tasks = two_workers();
  std::unique_ptr<CoordinationService> service =
      CoordinationService::start("127.0.0.1:0", tasks, coordination_options());
  std::string address = "127.0.0.1:" + std::to_string(service->port());
  std::unique_ptr<CoordinationClient> clients[2];
  CoordinationJob() {
    for (int i = 0; i < 2; ++i) {
      clients[i] =
          std::make_unique<CoordinationClient>(address, tasks[i], tasks, coordination_options());
    }
    auto other = std::async(std::launch::async, [&] { clients[1]->connect(); });
    clients[0]->connect();
    other.get();
  }
};

namespace cpb = coordination_pb;

grpc::Status outsider_register(const std::string& address, const std::string& token) {
  auto stub = cpb::Coordination::NewStub(outsider_channel(address));
  cpb::RegisterRequest request;
  request.mutable_task()->set_job("worker");
  request.mutable_task()->set_index(1);
  request.mutable_task()->set_incarnation(42);  // a "new process" of worker 1
  cpb::RegisterResponse response;
  return stub->Register(outsider_context(token).get(), request, &response);
}

TEST(JobToken, CoordinationServiceServesTheJobAndRefusesOutsiders) {
  TokenJob job_token;
  CoordinationJob job;  // its clients carry the token: connect() went through
  job.clients[0]->set("greeting", "hello");
  EXPECT_EQ(job.clients[1]->get("greeting", 5s), "hello");

  auto stub = cpb::Coordination::NewStub(outsider_channel(job.address));
  cpb::SetRequest set;
  set.mutable_task()->set_job("worker");
  set.mutable_task()->set_index(0);
  set.mutable_task()->set_incarnation(job.clients[0]->incarnation());
  set.set_key("greeting");
  set.set_value("overwritten");
  cpb::SetResponse response;
  grpc::Status status = stub->Set(outsider_context().get(), set, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_TRUE(contains(status.error_message(),
                       "the coordination service refused a call from ipv4:127.0.0.1:"))
      << status.error_message();
  EXPECT_TRUE(contains(status.error_message(), "it carries no job token"));
  EXPECT_TRUE(contains(status.error_message(), "STRATA_JOB_TOKEN_FILE or --job_token_file"));
  status = stub->Set(outsider_context("another-jobs-token").get(), set, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(contains(status.error_message(), "a job token that is not this job's"))
      << status.error_message();
  EXPECT_FALSE(contains(status.error_message(), job_token.token));  // never echoed
  EXPECT_EQ(job.clients[1]->try_get("greeting"), "hello");
  // With the token, the same raw call is the job's.
  status = stub->Set(outsider_context(job_token.token).get(), set, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(job.clients[1]->try_get("greeting"), "overwritten");
}

// Before the token, any process that reached the port could end the job: a Register naming a
// task with a new incarnation is taken for a restart of that task, a fatal error for all.
TEST(JobToken, AnOutsidersRegisterCannotEndTheJob) {
  TokenJob job_token;
  CoordinationJob job;
  for (const std::string& token : {std::string(), std::string("guessed")}) {
    const grpc::Status status = outsider_register(job.address, token);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  }
  // A posted error would fail every later call (ABORTED): the job goes on.
  job.clients[1]->set("still", "working");
  EXPECT_EQ(job.clients[0]->get("still", 5s), "working");
  EXPECT_EQ(job.clients[0]->posted_error(), std::nullopt);
  EXPECT_EQ(job.clients[1]->posted_error(), std::nullopt);
  // The same message with the token is a restart of worker 1, as it was for everyone before.
  const grpc::Status restart = outsider_register(job.address, job_token.token);
  EXPECT_EQ(restart.error_code(), grpc::StatusCode::ABORTED) << restart.error_message();
  EXPECT_TRUE(contains(restart.error_message(), "worker 1 (localhost:20001) restarted"));
}

namespace ppb = parameter_server_pb;

ParameterServerOptions ps_options() {
  ParameterServerOptions options;
  options.rpc_timeout = 10s;
  return options;
}

TEST(JobToken, PsServerServesTheJobAndRefusesOutsiders) {
  TokenJob job_token;
  auto ps = ParameterServer::start("127.0.0.1:0", ps_options());
  const std::string address = "127.0.0.1:" + std::to_string(ps->port());
  ParameterClient client("/job:ps/replica:0/task:0", address, ps_options());
  client.create_variable("v", "v", Tensor::from_vector(std::vector<float>{1, 2}, Shape{2}), true);

  auto stub = ppb::ParameterService::NewStub(outsider_channel(address));
  ppb::AssignRequest assign;
  assign.set_id("v");
  assign.set_mode(ppb::AssignRequest::ASSIGN);
  auto* value = assign.mutable_value();
  value->set_dtype(ppb::DT_FLOAT32);
  value->add_dims(2);
  const float zeros[2] = {0, 0};
  value->set_data(reinterpret_cast<const char*>(zeros), sizeof zeros);
  ppb::AssignResponse assigned;
  for (const std::string& token : {std::string(), std::string("guessed")}) {
    const grpc::Status status = stub->Assign(outsider_context(token).get(), assign, &assigned);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
    EXPECT_TRUE(contains(status.error_message(), "the ps server refused a call from ipv4:127.0.0.1:"))
        << status.error_message();
  }
  EXPECT_EQ(client.read({"v"})[0].to_vector<float>(), (std::vector<float>{1, 2}));  // untouched

  auto shut = std::async(std::launch::async, [&] { ps->wait_for_shutdown(); });
  ppb::ShutdownResponse shut_down;
  const grpc::Status refused =
      stub->Shutdown(outsider_context().get(), ppb::ShutdownRequest(), &shut_down);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  client.ping();   // still serving
  EXPECT_EQ(shut.wait_for(300ms), std::future_status::timeout);
  client.shutdown();  // the job's own
  EXPECT_EQ(shut.wait_for(30s), std::future_status::ready);
}

namespace wpb = parameter_server_pb;

TEST(JobToken, WorkerServerServesTheJobAndRefusesOutsiders) {
  TokenJob job_token;
  const ClusterSpec spec(std::map<std::string, std::vector<std::string>>{
      {"ps", {"127.0.0.1:1"}}, {"worker", {"127.0.0.1:2"}}});
  auto strategy = std::make_shared<ParameterServerStrategy>(spec, nullptr, ps_options());
  auto worker = WorkerServer::start("127.0.0.1:0", strategy, 0);
  const std::string address = "127.0.0.1:" + std::to_string(worker->port());

  auto stub = wpb::WorkerService::NewStub(outsider_channel(address));
  wpb::RunClosureRequest run;
  run.set_function("anything");
  run.set_dataset_id(-1);
  wpb::RunClosureResponse ran;
  grpc::Status status = stub->RunClosure(outsider_context().get(), run, &ran);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_TRUE(contains(status.error_message(), "the worker server refused a call from ipv4:"))
      << status.error_message();
  wpb::PrepareRequest prepare;
  wpb::PrepareResponse prepared;
  status = stub->Prepare(outsider_context("guessed").get(), prepare, &prepared);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();

  auto shut = std::async(std::launch::async, [&] { worker->wait_for_shutdown(); });
  wpb::ShutdownResponse shut_down;
  status = stub->Shutdown(outsider_context().get(), wpb::ShutdownRequest(), &shut_down);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(shut.wait_for(300ms), std::future_status::timeout);
  WorkerClient("/job:worker/replica:0/task:0", address, ps_options()).shutdown();  // the job's
  EXPECT_EQ(shut.wait_for(30s), std::future_status::ready);
}

// ---- binding ----

// Whether something accepts TCP connections at host:port.
bool accepts(const std::string& host, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return connected;
}

// 127.0.0.2 is this machine too (all of 127/8 is the loopback), but not the address a server of
// "127.0.0.1:port" listens on.
TEST(ServerBinding, ServersListenOnTheirOwnAddressOnly) {
  auto ps = ParameterServer::start("127.0.0.1:0", ps_options());
  EXPECT_TRUE(accepts("127.0.0.1", ps->port()));
  EXPECT_FALSE(accepts("127.0.0.2", ps->port()));
  auto coordination = CoordinationService::start("127.0.0.1:0", two_workers());
  EXPECT_TRUE(accepts("127.0.0.1", coordination->port()));
  EXPECT_FALSE(accepts("127.0.0.2", coordination->port()));
}

TEST(ServerBinding, BindHostListensOnEveryInterface) {
  JobSecurity security;
  security.bind_host = "0.0.0.0";
  ScopedJobSecurity every_interface(security);
  auto ps = ParameterServer::start("127.0.0.1:0", ps_options());
  EXPECT_TRUE(accepts("127.0.0.1", ps->port()));
  EXPECT_TRUE(accepts("127.0.0.2", ps->port()));
}

TEST(ServerBinding, BindFailureSuggestsTheBindHost) {
  auto first = ParameterServer::start("127.0.0.1:0", ps_options());
  const std::string taken = "127.0.0.1:" + std::to_string(first->port());
  try {
    ParameterServer::start(taken, ps_options());
    ADD_FAILURE() << "a second server bound " << taken;
  } catch (const CoordinationError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot listen on '" + taken + "'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "STRATA_BIND_HOST=0.0.0.0")) << e.what();
  }
}

// The coordination service of a multi-worker job listened on every interface ("[::]") while
// the ps and worker servers listened on their own address.
TEST(ServerBinding, MultiWorkerCoordinatorListensOnItsOwnAddress) {
  const std::vector<int> ports = free_ports(2);
  const ClusterSpec spec(std::map<std::string, std::vector<std::string>>{
      {"worker", {"127.0.0.1:" + std::to_string(ports[0]), "127.0.0.1:" + std::to_string(ports[1])}}});
  CommunicationOptions options;
  options.timeout_seconds(60).register_timeout_seconds(60);
  std::unique_ptr<WorkerCluster> clusters[2];
  std::vector<std::future<void>> joined;
  for (int i = 0; i < 2; ++i) {
    joined.push_back(std::async(std::launch::async, [&, i] {
      SimpleClusterResolver resolver(spec, SimpleClusterResolverOptions().task_type("worker").task_id(i));
      clusters[i] = WorkerCluster::join(resolver, options, "test");
    }));
  }
  for (auto& j : joined) j.get();
  ASSERT_TRUE(clusters[0] && clusters[1]);
  EXPECT_TRUE(accepts("127.0.0.1", ports[0]));
  EXPECT_FALSE(accepts("127.0.0.2", ports[0]));
  // Both leave together (the shutdown barrier).
  std::vector<std::future<void>> left;
  for (auto& c : clusters) left.push_back(std::async(std::launch::async, [&c] { c.reset(); }));
  for (auto& l : left) l.get();
}

}  // namespace
}  // namespace strata::testing
