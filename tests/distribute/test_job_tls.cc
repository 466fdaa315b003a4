// A job over mutual TLS (distribute/cluster/job_security.h) with a CA this test makes (the openssl
// command line): the coordination service (connect, barrier, key-value store) and a ps (read,
// push) work; a client speaking plaintext, one without a certificate, one whose certificate
// another CA signed, and one that does not trust the job's CA are all refused, each error
// naming the server it tried.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "distribute/cluster/coordination/coordination.grpc.pb.h"
#include "distribute/cluster/coordination/coordination_client.h"
#include "distribute/cluster/coordination/coordination_service.h"
#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "tests/distribute/job_security_test_util.h"

namespace strata::testing {
namespace {

using namespace distribute;
using namespace std::chrono_literals;
namespace cpb = coordination_pb;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

CoordinationOptions options(std::chrono::milliseconds register_timeout = 20s) {
  CoordinationOptions o;
  o.heartbeat_interval = 100ms;
  o.heartbeat_timeout = 5000ms;
  o.register_timeout = register_timeout;
  o.shutdown_timeout = 20s;
  o.rpc_timeout = 10s;
  return o;
}

ParameterServerOptions ps_options() {
  ParameterServerOptions o;
  o.rpc_timeout = 10s;
  return o;
}

// Two CAs, "job" and "other", each with one certificate for every task.
class JobTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("tls");
    ok_ = make_test_ca(*dir_, "job") && make_test_ca(*dir_, "other");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(ok_) << "the openssl command line could not make the CAs"; }

  static std::string pem(const std::string& file) { return read_text(dir_->path(file)); }
  // SSL credentials as a client outside the job might hold them.
  static std::shared_ptr<grpc::ChannelCredentials> ssl(const std::string& root_ca,
                                                       const std::string& cert_ca) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = pem(root_ca + "_ca.pem");
    if (!cert_ca.empty()) {
      o.pem_cert_chain = pem(cert_ca + "_cert.pem");
      o.pem_private_key = pem(cert_ca + "_key.pem");
    }
    return grpc::SslCredentials(o);
  }

  static ScratchDir* dir_;
  static bool ok_;
};
ScratchDir* JobTls::dir_ = nullptr;
bool JobTls::ok_ = false;

TEST_F(JobTls, AJobWorksOverMutualTls) {
  ScopedJobSecurity tls(tls_settings(*dir_, "job"));
  // Tasks named "localhost" (the certificate's DNS name) for the coordination service ...
  const std::vector<CoordinationTask> tasks = {{"worker", 0, "localhost:1"},
                                               {"worker", 1, "localhost:2"}};
  auto service = CoordinationService::start("localhost:0", tasks, options());
  const std::string address = "localhost:" + std::to_string(service->port());
  CoordinationClient c0(address, tasks[0], tasks, options());
  CoordinationClient c1(address, tasks[1], tasks, options());
  auto connected = std::async(std::launch::async, [&] { c1.connect(); });
  c0.connect();
  connected.get();
  c0.set("k", std::string("\0v", 2));
  EXPECT_EQ(c1.get("k", 5s), std::string("\0v", 2));
  EXPECT_EQ(c1.add("n", 2), 2);
  auto met = std::async(std::launch::async, [&] { c1.barrier("b", 10s); });
  c0.barrier("b", 10s);
  met.get();

  // ... and 127.0.0.1 (its IP name) for a ps.
  auto ps = ParameterServer::start("127.0.0.1:0", ps_options());
  ParameterClient client("/job:ps/replica:0/task:0", "127.0.0.1:" + std::to_string(ps->port()),
                         ps_options());
  client.create_variable("v", "v", Tensor::from_vector(std::vector<float>{1, 2}, Shape{2}), true);
  client.assign("v", Tensor::from_vector(std::vector<float>{10, 20}, Shape{2}), AssignMode::kAdd);
  EXPECT_EQ(client.read({"v"})[0].to_vector<float>(), (std::vector<float>{11, 22}));
  auto sync = std::async(std::launch::async, [&] { c1.shutdown(); });
  c0.shutdown();
  sync.get();
}

TEST_F(JobTls, ClientsWithoutTheJobsCertificatesAreRefused) {
  ScopedJobSecurity tls(tls_settings(*dir_, "job"));
  const std::vector<CoordinationTask> tasks = {{"worker", 0, "127.0.0.1:1"}};
  auto service = CoordinationService::start("127.0.0.1:0", tasks, options());
  const std::string address = "127.0.0.1:" + std::to_string(service->port());
  cpb::RegisterRequest request;
  request.mutable_task()->set_job("worker");
  request.mutable_task()->set_index(0);
  request.mutable_task()->set_incarnation(7);
  const struct {
    const char* who;
    std::shared_ptr<grpc::ChannelCredentials> credentials;
  } outsiders[] = {
      {"plaintext", grpc::InsecureChannelCredentials()},
      {"no client certificate", ssl("job", "")},
      {"a certificate of another CA", ssl("job", "other")},
      {"not trusting the job's CA", ssl("other", "other")},
  };
  for (const auto& outsider : outsiders) {
    auto stub = cpb::Coordination::NewStub(outsider_channel(address, outsider.credentials));
    cpb::RegisterResponse response;
    const grpc::Status status = stub->Register(outsider_context("", 10).get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
        << outsider.who << ": " << status.error_message();
    EXPECT_TRUE(contains(status.error_message(), address)) << outsider.who << ": "
                                                           << status.error_message();
  }
  // The job's own task still gets in.
  CoordinationClient member(address, tasks[0], tasks, options());
  member.connect();
  member.shutdown();
}

TEST_F(JobTls, ATaskOfAnotherCaIsToldWhatToCheck) {
  std::unique_ptr<CoordinationService> service;
  const std::vector<CoordinationTask> tasks = {{"worker", 0, "127.0.0.1:1"}};
  {
    ScopedJobSecurity tls(tls_settings(*dir_, "job"));
    service = CoordinationService::start("127.0.0.1:0", tasks, options());
  }
  const std::string address = "127.0.0.1:" + std::to_string(service->port());
  ScopedJobSecurity other(tls_settings(*dir_, "other"));
  CoordinationClient stranger(address, tasks[0], tasks, options(1500ms));
  try {
    stranger.connect();
    ADD_FAILURE() << "a task of another CA connected";
  } catch (const CoordinationError& e) {
    EXPECT_TRUE(contains(e.what(), "the coordination service at " + address)) << e.what();
    EXPECT_TRUE(contains(e.what(), "with TLS, also that every task's certificate is signed by "
                                   "the CA the others trust"))
        << e.what();
  }
}

}  // namespace
}  // namespace strata::testing
