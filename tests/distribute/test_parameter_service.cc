// The parameter service (distribute/parameter_server/): a ps task hosting plain variables over
// gRPC, its client, and RemoteVariable, the handle a parameter-server strategy creates. In
// process: servers on free loopback ports. A test strategy places every variable round-robin
// on two servers (slots beside their variable) and fit() must train a Conv2D + Embedding +
// Dense model to the same weights as without a strategy, the table read and updated by rows.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <numeric>

#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/parameter_server.grpc.pb.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/remote_variable.h"
#include "tests/distribute/conv_embedding_model.h"
#include "tests/distribute/two_ps_strategy.h"

namespace strata::testing {
namespace {

using distribute::CoordinationError;
using distribute::ParameterClient;
using distribute::ParameterServer;
using distribute::ParameterServerOptions;
using distribute::RemoteVariable;
namespace pb = distribute::parameter_server_pb;
using Clock = std::chrono::steady_clock;

// Runs `body`, expecting a CoordinationError whose message holds every one of `parts`.
template <class Body>
void expect_error(Body&& body, const std::vector<std::string>& parts) {
  try {
    body();
    ADD_FAILURE() << "no error";
  } catch (const CoordinationError& e) {
    for (const std::string& p : parts) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\nlacks: " << p;
    }
  }
}

TEST(ParameterService, CreateReadAssignRoundTrip) {
  Ps ps;
  const Tensor a = tensor<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_TRUE(ps.client->create_variable("a", "dense/kernel", a, true));
  EXPECT_TRUE(ps.client->create_variable("n", "iterations", Tensor::scalar<int64_t>(7), false));
  std::vector<Tensor> values = ps.client->read({"a", "n"});
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values[0].to_vector<float>(), a.to_vector<float>());
  EXPECT_EQ(values[1].item<int64_t>(), 7);

  ps.client->assign("a", tensor<float>({0, 0, 1, 1, 2, 2}, {3, 2}));
  ps.client->assign("a", tensor<float>({1, 1, 1, 1, 1, 1}, {3, 2}), distribute::AssignMode::kAdd);
  ps.client->assign("a", tensor<float>({0, 1, 0, 1, 0, 1}, {3, 2}), distribute::AssignMode::kSub);
  EXPECT_EQ(ps.client->read({"a"})[0].to_vector<float>(), (std::vector<float>{1, 0, 2, 1, 3, 2}));
  ps.client->assign("n", Tensor::scalar<int64_t>(1), distribute::AssignMode::kAdd);
  EXPECT_EQ(ps.client->read({"n"})[0].item<int64_t>(), 8);

  const Tensor rows = ps.client->read_rows("a", {2, 0, 2});
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(rows.to_vector<float>(), (std::vector<float>{3, 2, 1, 0, 3, 2}));
  EXPECT_EQ(ps.server->counters("a").rows_served, 3);
  EXPECT_EQ(ps.server->counters("a").assigns, 3);
  EXPECT_GT(ps.client->bytes_sent(), 0);
  EXPECT_GT(ps.client->bytes_received(), 0);
  ps.client->ping();
}

TEST(ParameterService, CreateAgainKeepsTheValueAndRefusesAnotherShape) {
  Ps ps;
  EXPECT_TRUE(ps.client->create_variable("a", "w", tensor<float>({1, 2}, {2}), true));
  ps.client->assign("a", tensor<float>({5, 6}, {2}));
  // A second worker rebuilding the model: same id, shape and dtype, its own initial value.
  ParameterClient other("/job:ps/replica:0/task:0", ps.address, test_options());
  EXPECT_FALSE(other.create_variable("a", "w", tensor<float>({9, 9}, {2}), true));
  EXPECT_EQ(ps.client->read({"a"})[0].to_vector<float>(), (std::vector<float>{5, 6}));
  EXPECT_EQ(ps.server->num_variables(), 1u);
  expect_error([&] { other.create_variable("a", "w", tensor<float>({1, 2, 3}, {3}), true); },
               {"/job:ps/replica:0/task:0", "'w'", "exists as [2] float32", "[3] float32"});
}

TEST(ParameterService, UpdatesApplyTheOptimizerRuleDenseAndSparse) {
  Ps ps;
  ps.client->create_variable("t", "table", tensor<float>({1, 1, 2, 2, 3, 3}, {3, 2}), true);
  ps.client->create_variable("m", "table/momentum", zeros({3, 2}), false);
  OptimizerUpdate sgd;
  sgd.learning_rate = 0.5f;
  sgd.momentum = 0.9f;
  // The same update applied to a local variable by the optimizer's code path.
  Variable local(VariableSpec{"table", {3, 2}, float32, {}, tensor<float>({1, 1, 2, 2, 3, 3}, {3, 2})});
  VariableSpec slot_spec{"m", {3, 2}, float32};
  auto local_m = std::make_shared<Variable>(slot_spec);
  const IndexedSlices rows{Tensor::from_vector<int64_t>({2}), tensor<float>({1, -1}, {1, 2}), {3, 2}};
  for (int step = 0; step < 2; ++step) {
    const Gradient dense(tensor<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
    ps.client->apply_update("t", {"m"}, sgd, dense);
    ps.client->apply_update("t", {"m"}, sgd, Gradient(rows));
    UpdateBatch batch;
    local.apply_update(VariableUpdate{sgd, dense, {local_m}}, batch);
    batch.finish();
    UpdateBatch sparse_batch;
    local.apply_update(VariableUpdate{sgd, Gradient(rows), {local_m}}, sparse_batch);
    sparse_batch.finish();
  }
  EXPECT_EQ(ps.client->read({"t"})[0].to_vector<float>(), local.value().to_vector<float>());
  EXPECT_EQ(ps.client->read({"m"})[0].to_vector<float>(), local_m->value().to_vector<float>());
  EXPECT_EQ(ps.server->counters("t").dense_updates, 2);
  EXPECT_EQ(ps.server->counters("t").sparse_updates, 2);
  EXPECT_EQ(ps.server->counters("t").rows_updated, 2);
}

TEST(ParameterService, ConcurrentPushesToOneVariableAllLand) {
  Ps ps;
  ps.client->create_variable("v", "v", zeros({64}), true);
  OptimizerUpdate sgd;
  sgd.learning_rate = 1.0f;
  constexpr int kThreads = 4, kPushes = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      // Each worker its own channel, as separate worker processes would have.
      ParameterClient client("/job:ps/replica:0/task:0", ps.address, test_options());
      for (int i = 0; i < kPushes; ++i) client.apply_update("v", {}, sgd, Gradient(ones({64})));
    });
  }
  for (std::thread& t : threads) t.join();
  for (float x : ps.client->read({"v"})[0].to_vector<float>()) EXPECT_EQ(x, -kThreads * kPushes);
}

// Requests no well-behaved client sends, through the raw stub: each is refused with a status
// naming the field, and the server goes on serving.
TEST(ParameterService, MalformedRequestsAreRefusedAndTheServerSurvives) {
  Ps ps;
  ps.client->create_variable("a", "w", zeros({2, 3}), true);
  auto stub = pb::ParameterService::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(ps.server->port()),
                          grpc::InsecureChannelCredentials()));
  const auto create = [&](pb::TensorProto value) {
    pb::CreateVariableRequest request;
    request.set_id("b");
    request.set_name("bad");
    *request.mutable_initial_value() = std::move(value);
    pb::CreateVariableResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return stub->CreateVariable(&context, request, &response);
  };
  pb::TensorProto t;
  t.set_dtype(pb::DT_FLOAT32);
  t.add_dims(2);
  t.add_dims(3);
  t.set_data(std::string(5, '\0'));   // 24 expected
  grpc::Status status = create(t);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("initial_value.data has 5 bytes, expected 24"),
            std::string::npos) << status.error_message();

  t.set_dtype(pb::DataType(99));
  t.set_data(std::string(24, '\0'));
  status = create(t);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("initial_value.dtype: 99"), std::string::npos)
      << status.error_message();

  t.set_dtype(pb::DT_FLOAT32);
  t.set_dims(0, -2);
  status = create(t);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("dims[0] is -2"), std::string::npos)
      << status.error_message();

  // Too large for the bound (and numel * itemsize would overflow int64).
  t.set_dims(0, int64_t(1) << 40);
  t.set_dims(1, int64_t(1) << 40);
  status = create(t);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("exceeds the bound"), std::string::npos)
      << status.error_message();

  // Through the client: an unknown id, rows out of range, a wrong gradient, a missing slot.
  expect_error([&] { ps.client->read({"a", "nope"}); },
               {"Read", "/job:ps/replica:0/task:0", "no variable with id 'nope'"});
  expect_error([&] { ps.client->read_rows("a", {0, 2}); }, {"indices[1] = 2", "outside [0, 2)"});
  OptimizerUpdate sgd;
  expect_error([&] { ps.client->apply_update("a", {}, sgd, Gradient(zeros({3, 2}))); },
               {"'w'", "dense_gradient is [3,2] float32", "expected the variable's [2,3]"});
  sgd.momentum = 0.9f;
  expect_error([&] { ps.client->apply_update("a", {}, sgd, Gradient(zeros({2, 3}))); },
               {"0 slots given, the rule takes 1"});
  expect_error([&] { ps.client->apply_update("a", {"m"}, sgd, Gradient(zeros({2, 3}))); },
               {"no variable with id 'm'"});
  const IndexedSlices bad_rows{Tensor::from_vector<int64_t>({5}), zeros({1, 3}), {2, 3}};
  sgd.momentum = 0.0f;
  expect_error([&] { ps.client->apply_update("a", {}, sgd, Gradient(bad_rows)); },
               {"indices[0] = 5"});
  expect_error([&] { ps.client->assign("a", zeros({2, 3}, float64)); },
               {"value is [2,3] float64"});

  ps.client->ping();
  EXPECT_EQ(ps.client->read({"a"})[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(ps.server->num_variables(), 1u);
}

// Hand-made requests through the generated stub, to a ps whose messages are bounded at 1 MiB.
class HostileMessages : public ::testing::Test {
 protected:
  static constexpr size_t kMaxBytes = size_t(1) << 20;

  void SetUp() override {
    ParameterServerOptions options = test_options();
    options.max_message_bytes = kMaxBytes;
    server_ = ParameterServer::start("localhost:0", options);
    client_ = std::make_unique<ParameterClient>(
        "/job:ps/replica:0/task:0", "localhost:" + std::to_string(server_->port()), options);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(int(2 * kMaxBytes));
    args.SetMaxSendMessageSize(int(2 * kMaxBytes));
    stub_ = pb::ParameterService::NewStub(grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials(), args));
  }

  // Calls `rpc` with `request`; the status (a 5 s deadline).
  template <class Request, class Response, class Rpc>
  grpc::Status call(Rpc rpc, const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return (stub_.get()->*rpc)(&context, request, response);
  }
  grpc::Status push(const pb::VariablePush& p) {
    pb::ApplyUpdateRequest request;
    *request.add_pushes() = p;
    pb::ApplyUpdateResponse response;
    return call(&pb::ParameterService::Stub::ApplyUpdate, request, &response);
  }
  grpc::Status create(const std::string& id, const pb::TensorProto& value) {
    pb::CreateVariableRequest request;
    request.set_id(id);
    request.set_name(id);
    *request.mutable_initial_value() = value;
    pb::CreateVariableResponse response;
    return call(&pb::ParameterService::Stub::CreateVariable, request, &response);
  }
  // Expects `status` to be `code` with a message holding every one of `parts`.
  static void expect_refused(const grpc::Status& status, grpc::StatusCode code,
                             const std::vector<std::string>& parts) {
    EXPECT_EQ(status.error_code(), code) << status.error_message();
    for (const std::string& p : parts) {
      EXPECT_NE(status.error_message().find(p), std::string::npos)
          << status.error_message() << "\nlacks: " << p;
    }
  }
  static pb::TensorProto proto_of(const Tensor& t) {
    pb::TensorProto proto;
    proto.set_dtype(t.dtype() == float32 ? pb::DT_FLOAT32
                    : t.dtype() == int64 ? pb::DT_INT64
                                         : pb::DT_INVALID);
    for (int64_t d : t.shape().dims()) proto.add_dims(d);
    proto.set_data(static_cast<const char*>(t.raw_data()), t.nbytes());
    return proto;
  }
  // A push of a dense SGD update of `grad` to `id` (learning rate 0.1, step 1).
  static pb::VariablePush sgd_push(const std::string& id, const Tensor& grad) {
    pb::VariablePush p;
    p.set_id(id);
    p.mutable_rule()->set_kind(pb::OptimizerUpdate::SGD);
    p.mutable_rule()->set_learning_rate(0.1f);
    p.mutable_rule()->set_step(1);
    p.mutable_rule()->set_grad_scale(1.0f);
    *p.mutable_dense_gradient() = proto_of(grad);
    return p;
  }
  // The ps still serves, and variable `id` still reads as `expected`.
  void expect_alive(const std::string& id, const std::vector<float>& expected) {
    client_->ping();
    EXPECT_EQ(client_->read({id})[0].to_vector<float>(), expected);
  }

  std::unique_ptr<ParameterServer> server_;
  std::unique_ptr<ParameterClient> client_;
  std::unique_ptr<pb::ParameterService::Stub> stub_;
};

TEST_F(HostileMessages, SparsePushToAScalarIsRefusedNotACrash) {
  // Every compiled job has one: the optimizer's step count (and a scalar float here).
  client_->create_variable("s", "scalar", Tensor::scalar<float>(1.0f), true);
  pb::VariablePush p = sgd_push("s", Tensor::scalar<float>(1.0f));
  p.clear_dense_gradient();
  p.set_sparse(true);
  // No rows: zero indices and a [0] float32 rows tensor (this wrote dims[0] of an empty shape
  // in IndexedSlices::rows_shape: SIGSEGV), and no rows field at all.
  *p.mutable_rows() = proto_of(zeros({0}));
  expect_refused(push(p), grpc::StatusCode::INVALID_ARGUMENT,
                 {"'scalar'", "sparse = true", "is a scalar", "no rows"});
  p.clear_rows();
  expect_refused(push(p), grpc::StatusCode::INVALID_ARGUMENT, {"is a scalar"});
  p.add_indices(0);
  *p.mutable_rows() = proto_of(tensor<float>({1}, {1}));
  expect_refused(push(p), grpc::StatusCode::INVALID_ARGUMENT, {"is a scalar"});
  expect_alive("s", {1.0f});
}

TEST_F(HostileMessages, RepliesLargerThanTheBoundAreRefusedBeforeTheyAreBuilt) {
  // 512 KiB, 128 KiB a row: half the bound.
  client_->create_variable("big", "big", zeros({4, 32768}), true);
  // 400 000 rows of 128 KiB would be 49 GiB: refused before anything is allocated.
  pb::ReadRowsRequest rows;
  rows.set_id("big");
  for (int i = 0; i < 400000; ++i) rows.add_indices(i % 4);
  pb::ReadRowsResponse rows_response;
  expect_refused(call(&pb::ParameterService::Stub::ReadRows, rows, &rows_response),
                 grpc::StatusCode::RESOURCE_EXHAUSTED,
                 {"ReadRows", "400000 indices", "131072-byte rows", "'big'",
                  "max_message_bytes = 1048576"});
  // The same variable three times in one Read: 1.5 MiB, refused before it is copied.
  pb::ReadRequest read;
  for (int i = 0; i < 3; ++i) read.add_ids("big");
  pb::ReadResponse read_response;
  expect_refused(call(&pb::ParameterService::Stub::Read, read, &read_response),
                 grpc::StatusCode::RESOURCE_EXHAUSTED,
                 {"Read", "ids[0..2]", "max_message_bytes = 1048576"});
  // Within the bound, both still answer.
  EXPECT_EQ(client_->read_rows("big", {3, 0}).shape(), (Shape{2, 32768}));
  EXPECT_EQ(client_->read({"big"})[0].shape(), (Shape{4, 32768}));
}

TEST_F(HostileMessages, MalformedTensorsAreRefusedNamingTheField) {
  pb::TensorProto t;
  t.set_dtype(pb::DT_FLOAT32);
  // A zero dim holds no bytes, but the others still make strides: bounded as well.
  t.add_dims(0);
  t.add_dims(int64_t(1) << 40);
  t.add_dims(int64_t(1) << 40);
  expect_refused(create("z", t), grpc::StatusCode::INVALID_ARGUMENT,
                 {"initial_value", "[0,1099511627776,1099511627776]", "exceeds the bound"});
  // A rank above kMaxRank.
  t.clear_dims();
  for (int i = 0; i < 33; ++i) t.add_dims(1);
  t.set_data(std::string(4, '\0'));
  expect_refused(create("r", t), grpc::StatusCode::INVALID_ARGUMENT,
                 {"initial_value.dims", "rank 33", "32"});
  // A bool byte that is neither 0 nor 1 (reading it as a bool is undefined behaviour).
  t.clear_dims();
  t.set_dtype(pb::DT_BOOL);
  t.add_dims(3);
  t.set_data(std::string("\x01\x00\x02", 3));
  expect_refused(create("b", t), grpc::StatusCode::INVALID_ARGUMENT,
                 {"initial_value.data[2] is 2", "0 or 1"});
  EXPECT_EQ(server_->num_variables(), 0u);
}

TEST_F(HostileMessages, HyperParametersOutOfRangeAreRefusedNamingTheField) {
  client_->create_variable("w", "w", ones({3}), true);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    std::function<void(pb::OptimizerUpdate*)> set;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[&](pb::OptimizerUpdate* r) { r->set_learning_rate(nan); }, "rule.learning_rate is nan"},
      {[&](pb::OptimizerUpdate* r) { r->set_learning_rate(inf); }, "rule.learning_rate is inf"},
      {[&](pb::OptimizerUpdate* r) { r->set_learning_rate(-0.1f); }, "rule.learning_rate is -0.1"},
      {[&](pb::OptimizerUpdate* r) { r->set_momentum(-1.0f); }, "rule.momentum is -1"},
      {[&](pb::OptimizerUpdate* r) { r->set_momentum(nan); }, "rule.momentum is nan"},
      {[&](pb::OptimizerUpdate* r) { r->set_beta_1(1.0f); }, "rule.beta_1 is 1"},
      {[&](pb::OptimizerUpdate* r) { r->set_beta_2(-0.5f); }, "rule.beta_2 is -0.5"},
      {[&](pb::OptimizerUpdate* r) { r->set_rho(2.0f); }, "rule.rho is 2"},
      {[&](pb::OptimizerUpdate* r) { r->set_epsilon(-inf); }, "rule.epsilon is -inf"},
      {[&](pb::OptimizerUpdate* r) { r->set_weight_decay(-1.0f); }, "rule.weight_decay is -1"},
      {[&](pb::OptimizerUpdate* r) { r->set_clip_value(nan); }, "rule.clip_value is nan"},
      {[&](pb::OptimizerUpdate* r) { r->set_grad_scale(-2.0f); }, "rule.grad_scale is -2"},
      {[&](pb::OptimizerUpdate* r) { r->set_step(0); }, "rule.step is 0"},
      {[&](pb::OptimizerUpdate* r) { r->set_kind(pb::OptimizerUpdate::Kind(9)); }, "rule.kind: 9"},
  };
  for (const Case& c : cases) {
    pb::VariablePush p = sgd_push("w", ones({3}));
    c.set(p.mutable_rule());
    expect_refused(push(p), grpc::StatusCode::INVALID_ARGUMENT, {"'w'", c.field});
  }
  expect_alive("w", {1, 1, 1});
  // A NaN gradient scale is how clipnorm passes on a NaN gradient norm (as Keras): accepted.
  pb::VariablePush p = sgd_push("w", ones({3}));
  p.mutable_rule()->set_grad_scale(nan);
  EXPECT_TRUE(push(p).ok());
}

TEST_F(HostileMessages, PushesThatDoNotFitTheVariableAreRefused) {
  client_->create_variable("w", "w", ones({2, 2}), true);
  client_->create_variable("m", "w/momentum", zeros({2, 2}), false);
  client_->create_variable("n", "n", Tensor::scalar<int64_t>(0), false);
  // Slots: more than any rule takes, refused before any lookup.
  pb::VariablePush p = sgd_push("w", ones({2, 2}));
  for (int i = 0; i < 5; ++i) p.add_slot_ids("m");
  expect_refused(push(p), grpc::StatusCode::INVALID_ARGUMENT,
                 {"slot_ids: 5 slots given, the rule takes 0"});
  // The step count is not a float32 variable: the optimizer kernels cannot update it.
  expect_refused(push(sgd_push("n", Tensor::scalar<int64_t>(1))),
                 grpc::StatusCode::INVALID_ARGUMENT, {"'n'", "[] int64", "float32 variables only"});
  // A dense push with rows, a sparse one with a dense gradient.
  p = sgd_push("w", ones({2, 2}));
  p.add_indices(0);
  expect_refused(push(p), grpc::StatusCode::INVALID_ARGUMENT, {"dense push", "indices or rows"});
  p.set_sparse(true);
  *p.mutable_rows() = proto_of(ones({1, 2}));
  expect_refused(push(p), grpc::StatusCode::INVALID_ARGUMENT, {"sparse push", "dense_gradient"});
  // Unknown slot id, named with its position.
  p = sgd_push("w", ones({2, 2}));
  p.mutable_rule()->set_momentum(0.9f);
  p.add_slot_ids("nope");
  expect_refused(push(p), grpc::StatusCode::NOT_FOUND, {"slot_ids[0]", "'nope'"});
  expect_alive("w", {1, 1, 1, 1});
}

TEST_F(HostileMessages, AttachRefusesDataMissingVariablesAndOtherShapes) {
  client_->create_variable("a", "a", tensor<float>({1, 2, 3, 4, 5, 6}, {3, 2}), true);
  pb::CreateVariableRequest request;
  request.set_id("a");
  request.set_name("a");
  request.set_attach(true);
  *request.mutable_initial_value() = proto_of(tensor<float>({9, 9, 9, 9, 9, 9}, {3, 2}));
  pb::CreateVariableResponse response;
  expect_refused(call(&pb::ParameterService::Stub::CreateVariable, request, &response),
                 grpc::StatusCode::INVALID_ARGUMENT, {"(attach)", "24 bytes of data"});
  request.mutable_initial_value()->clear_data();
  request.mutable_initial_value()->set_dtype(pb::DataType(77));
  expect_refused(call(&pb::ParameterService::Stub::CreateVariable, request, &response),
                 grpc::StatusCode::INVALID_ARGUMENT, {"(attach)", "dtype"});
  // 100 000 dims of 2^40: compared as numbers, refused, nothing built from them.
  request.mutable_initial_value()->set_dtype(pb::DT_FLOAT32);
  for (int i = 0; i < 100000; ++i) request.mutable_initial_value()->add_dims(int64_t(1) << 40);
  expect_refused(call(&pb::ParameterService::Stub::CreateVariable, request, &response),
                 grpc::StatusCode::ALREADY_EXISTS, {"exists as [3,2] float32", ",...]"});
  request.set_id("missing");
  expect_refused(call(&pb::ParameterService::Stub::CreateVariable, request, &response),
                 grpc::StatusCode::NOT_FOUND, {"no variable has id 'missing'"});
  expect_alive("a", {1, 2, 3, 4, 5, 6});
}

TEST_F(HostileMessages, AssignAndFetchAddRefuseBadModesDtypesAndOverflow) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  client_->create_variable("n", "n", Tensor::scalar<int64_t>(max - 1), false);
  client_->create_variable("w", "w", ones({2}), true);
  pb::AssignRequest assign;
  assign.set_id("n");
  *assign.mutable_value() = proto_of(Tensor::scalar<int64_t>(5));
  assign.set_mode(pb::AssignRequest::Mode(7));
  pb::AssignResponse assign_response;
  expect_refused(call(&pb::ParameterService::Stub::Assign, assign, &assign_response),
                 grpc::StatusCode::INVALID_ARGUMENT, {"mode 7", "ASSIGN, ADD or SUB"});
  // max - 1 + 5 overflows: refused, not wrapped (signed overflow is undefined behaviour).
  assign.set_mode(pb::AssignRequest::ADD);
  expect_refused(call(&pb::ParameterService::Stub::Assign, assign, &assign_response),
                 grpc::StatusCode::INVALID_ARGUMENT,
                 {"Assign", "'n'", "element 0", "+ 5 overflows int64"});
  EXPECT_EQ(client_->read({"n"})[0].item<int64_t>(), max - 1);

  pb::FetchAddRequest fetch;
  fetch.set_id("n");
  fetch.set_delta(1);
  pb::FetchAddResponse fetch_response;
  ASSERT_TRUE(call(&pb::ParameterService::Stub::FetchAdd, fetch, &fetch_response).ok());
  EXPECT_EQ(fetch_response.previous(), max - 1);
  expect_refused(call(&pb::ParameterService::Stub::FetchAdd, fetch, &fetch_response),
                 grpc::StatusCode::INVALID_ARGUMENT, {"FetchAdd", "'n'", "overflows int64"});
  fetch.set_id("w");
  expect_refused(call(&pb::ParameterService::Stub::FetchAdd, fetch, &fetch_response),
                 grpc::StatusCode::INVALID_ARGUMENT, {"'w'", "[2] float32", "an int64 scalar"});
  fetch.set_id("none");
  expect_refused(call(&pb::ParameterService::Stub::FetchAdd, fetch, &fetch_response),
                 grpc::StatusCode::NOT_FOUND, {"FetchAdd", "'none'"});
  EXPECT_EQ(client_->read({"n"})[0].item<int64_t>(), max);
  EXPECT_EQ(server_->counters("n").fetch_adds, 1);
  expect_alive("w", {1, 1});
}

TEST(ParameterService, FetchAddClaimsOneValueForEachCallerAtOnce) {
  Ps ps;
  ps.client->create_variable("n", "iterations", Tensor::scalar<int64_t>(0), false);
  constexpr int kThreads = 4, kCalls = 25;
  std::vector<std::vector<int64_t>> claimed(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ParameterClient client("/job:ps/replica:0/task:0", ps.address, test_options());
      for (int i = 0; i < kCalls; ++i) claimed[size_t(t)].push_back(client.fetch_add("n", 1));
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<int64_t> all;
  for (const auto& c : claimed) all.insert(all.end(), c.begin(), c.end());
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected(kThreads * kCalls);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
  EXPECT_EQ(ps.client->read({"n"})[0].item<int64_t>(), kThreads * kCalls);
}

TEST(RemoteVariable, StoppedServerFailsTheNextReadWithinSecondsNamingTheTask) {
  auto ps = std::make_unique<Ps>(3);
  VariableSpec spec{"dense/kernel", {2, 2}, float32};
  RemoteVariable v(spec, ps->client, "0:dense/kernel");
  EXPECT_EQ(v.task(), "/job:ps/replica:0/task:3");
  EXPECT_EQ(v.value().to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
  const std::shared_ptr<ParameterClient> client = ps->client;
  ps->server.reset();
  const Clock::time_point start = Clock::now();
  expect_error([&] { v.value(); }, {"/job:ps/replica:0/task:3", "unreachable"});
  // The refused connection, not the call's deadline, ended it.
  EXPECT_LT(Clock::now() - start, test_options().rpc_timeout);
}

// Calls to several ps at once (ParallelCalls): every reply taken by this thread in wait(); a
// stopped ps fails the wait naming its task, after the live one answered; calls never waited
// for are cancelled by the destructor without waiting for their deadline.
TEST(ParallelCalls, EveryPsAnswersInOneWaitAndAStoppedOneIsNamed) {
  auto live = std::make_unique<Ps>(0);
  auto stopped = std::make_unique<Ps>(1);
  for (Ps* ps : {live.get(), stopped.get()}) {
    ps->client->create_variable("v", "v", Tensor::from_vector<float>({1.0f, 2.0f}, Shape{2}), true);
  }
  // The write goes to another variable: calls in flight together have no order between them,
  // so a read of the written variable could see the write or not.
  live->client->create_variable("w", "w", Tensor::from_vector<float>({1.0f, 2.0f}, Shape{2}), true);
  {
    distribute::ParallelCalls calls;
    auto a = live->client->read_in(calls, {"v"});
    auto b = stopped->client->read_rows_in(calls, "v", {1});
    live->client->write_in(calls, {{"w", Tensor::from_vector<float>({5.0f, 6.0f}, Shape{2}),
                                    distribute::AssignMode::kAdd}}, {});
    calls.wait();
    ASSERT_EQ(a->size(), 1u);
    EXPECT_EQ((*a)[0].to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
    EXPECT_EQ(b->to_vector<float>(), (std::vector<float>{2.0f}));
  }
  EXPECT_EQ(live->client->read({"w"})[0].to_vector<float>(), (std::vector<float>{6.0f, 8.0f}));
  stopped->server.reset();
  {
    distribute::ParallelCalls calls;
    auto a = live->client->read_in(calls, {"v"});
    stopped->client->read_in(calls, {"v"});
    const Clock::time_point start = Clock::now();
    expect_error([&] { calls.wait(); }, {"/job:ps/replica:0/task:1", "unreachable"});
    EXPECT_LT(Clock::now() - start, test_options().rpc_timeout);
    EXPECT_EQ((*a)[0].to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
  }
  const Clock::time_point start = Clock::now();
  {
    distribute::ParallelCalls calls;  // never waited for
    live->client->read_in(calls, {"v"});
    stopped->client->read_in(calls, {"v"});
  }
  EXPECT_LT(Clock::now() - start, test_options().rpc_timeout);
}

TEST(RemoteVariable, GradientsReachTheHandleDenseAndAsRows) {
  Ps ps;
  VariableSpec spec{"table", {5, 2}, float32};
  spec.initial_value = tensor<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {5, 2});
  auto table = std::make_shared<RemoteVariable>(spec, ps.client, "t");
  const Tensor ids = Tensor::from_vector<int64_t>({3, 1, 3}, Shape{3});
  {
    GradientTape tape;
    const Tensor rows = table->gather(ids);
    EXPECT_EQ(rows.to_vector<float>(), (std::vector<float>{6, 7, 2, 3, 6, 7}));
    const std::vector<Gradient> g = tape.gradient_with_slices(reduce_sum(rows), {table});
    ASSERT_TRUE(g[0].is_sparse());
    EXPECT_EQ(g[0].to_dense().to_vector<float>(),
              (std::vector<float>{0, 0, 1, 1, 0, 0, 2, 2, 0, 0}));
  }
  {
    GradientTape tape;
    const Tensor loss = add(reduce_sum(table->gather(ids)), reduce_sum(table->value()));
    const std::vector<Tensor> g = tape.gradient(loss, std::vector<VariablePtr>{table});
    EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 1, 1, 3, 3, 1, 1}));
  }
  // Only the two unique rows travelled, the table was read whole once.
  EXPECT_EQ(ps.server->counters("t").rows_served, 4);
  EXPECT_EQ(ps.server->counters("t").full_reads, 1);
}

TEST(RemoteVariable, SecondWorkersHandlesShareTheVariable) {
  Ps ps;
  VariableSpec spec{"dense/bias", {3}, float32};
  spec.initializer = [](const Shape& shape, DType dtype) { return ones(shape, dtype); };
  RemoteVariable first(spec, ps.client, "0:dense/bias");
  first.assign(tensor<float>({1, 2, 3}, {3}));
  // Another worker rebuilding the model creates it again (kept) or attaches to it.
  auto other = std::make_shared<ParameterClient>("/job:ps/replica:0/task:0", ps.address,
                                                 test_options());
  RemoteVariable again(spec, other, "0:dense/bias");
  RemoteVariable handle(spec, other, "0:dense/bias", RemoteVariable::Origin::kAttach);
  handle.assign_add(tensor<float>({1, 1, 1}, {3}));
  EXPECT_EQ(again.value().to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(first.value().to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(ps.server->num_variables(), 1u);
}

TEST(RemoteVariable, SlotOnAnotherPsIsAnErrorNamingIt) {
  Ps ps0(0), ps1(1);
  VariableSpec spec{"w", {2}, float32};
  auto w = std::make_shared<RemoteVariable>(spec, ps0.client, "w");
  VariableSpec slot_spec{"w/momentum", {2}, float32};
  auto misplaced = std::make_shared<RemoteVariable>(slot_spec, ps1.client, "w/momentum");
  OptimizerUpdate sgd;
  sgd.momentum = 0.9f;
  UpdateBatch batch;
  try {
    w->apply_update(VariableUpdate{sgd, Gradient(ones({2})), {misplaced}}, batch);
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'w/momentum' is on /job:ps/replica:0/task:1"), std::string::npos) << m;
    EXPECT_NE(m.find("colocate_with"), std::string::npos) << m;
  }
}

TEST(ParameterService, AttachChecksTheShapeAndDtypeWithoutTheValue) {
  Ps ps;
  const Tensor a = tensor<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  ps.client->create_variable("a", "dense/kernel", a, true);
  const int64_t sent = ps.client->bytes_sent();
  ps.client->attach_variable("a", "dense/kernel", Shape{3, 2}, float32);
  EXPECT_LT(ps.client->bytes_sent() - sent, 64);
  EXPECT_EQ(ps.client->read({"a"})[0].to_vector<float>(), a.to_vector<float>());
  expect_error([&] { ps.client->attach_variable("a", "dense/kernel", Shape{2, 3}, float32); },
               {"(attach)", "exists as [3,2] float32", "dims [2,3] float32"});
  expect_error([&] { ps.client->attach_variable("b", "dense/bias", Shape{2}, float32); },
               {"'dense/bias' (attach)", "no variable has id 'b'", "restart the job"});
}

// A worker rebuilding the coordinator's model attaches to its variables: their values stay on
// the ps, and the worker neither computes nor sends them.
TEST(ParameterService, AWorkerAttachesToWhatTheCoordinatorPlacedWithoutSendingValues) {
  Ps ps;
  const distribute::ClusterSpec cluster(std::map<std::string, std::vector<std::string>>{
      {"ps", {ps.address}}, {"worker", {"localhost:1"}}});
  VariableSpec spec{"big/kernel", {256, 256}, float32};
  spec.initializer = [](const Shape& s, DType d) { return random_uniform(s, -1, 1, d, 3); };
  distribute::ParameterServerStrategy coordinator(cluster, nullptr, test_options());
  VariablePtr made;
  {
    auto scope = coordinator.scope();
    made = create_variable(spec);
  }
  const Tensor value = made->read_value();

  distribute::ParameterServerStrategy worker(cluster, nullptr, test_options());
  worker.set_placement(coordinator.placement_json());
  const std::shared_ptr<ParameterClient>& client = worker.ps_clients()[0];
  const int64_t before = client->bytes_sent();
  VariablePtr attached, fresh;
  {
    auto scope = worker.scope();
    spec.initializer = [](const Shape& s, DType d) { return zeros(s, d); };
    attached = create_variable(spec);
    fresh = create_variable(VariableSpec{"small/bias", {4}, float32});
  }
  // 256 KiB attached for under a kilobyte; the variable the placement did not list is made.
  EXPECT_LT(client->bytes_sent() - before, 1024);
  EXPECT_EQ(attached->read_value().to_vector<float>(), value.to_vector<float>());
  EXPECT_EQ(ps.server->num_variables(), 2u);
}

class TwoPsFit : public ::testing::TestWithParam<std::string> {};

TEST_P(TwoPsFit, FitOnTwoPsMatchesNoStrategyAndTheTableTravelsByRows) {
  const auto options = FitOptions().epochs(2).verbose(0);
  std::shared_ptr<Model> plain = conv_embedding_model(GetParam());
  plain->fit(conv_embedding_data(), options);

  TwoPsStrategy strategy;
  std::shared_ptr<Model> remote;
  {
    auto scope = strategy.scope();
    remote = conv_embedding_model(GetParam());
  }
  std::string table;
  for (const VariablePtr& v : remote->trainable_variables()) {
    ASSERT_NE(dynamic_cast<RemoteVariable*>(v.get()), nullptr) << v->name();
    if (v->name().find("embedding") != std::string::npos) table = v->name();
  }
  ASSERT_FALSE(table.empty());
  const auto [table_ps, table_id] = strategy.placement(table);
  const distribute::HostedVariableCounters before = strategy.ps(table_ps).server->counters(table_id);
  remote->fit(conv_embedding_data(), options);
  const distribute::HostedVariableCounters after = strategy.ps(table_ps).server->counters(table_id);
  expect_weights_near(remote->get_weights(), plain->get_weights(), 1e-6, 1e-7);

  // Both servers host variables, and every slot sits beside its variable.
  EXPECT_GT(strategy.ps(0).server->num_variables(), 0u);
  EXPECT_GT(strategy.ps(1).server->num_variables(), 0u);
  const int64_t steps = 2 * kSamples / kBatch;
  for (const VariablePtr& v : remote->trainable_variables()) {
    const auto [task, id] = strategy.placement(v->name());
    const distribute::HostedVariableCounters c = strategy.ps(task).server->counters(id);
    EXPECT_EQ(c.dense_updates + c.sparse_updates, steps) << v->name();
  }
  // The table was never read whole during fit; only touched rows were served and pushed.
  EXPECT_EQ(after.full_reads - before.full_reads, 0);
  EXPECT_GT(after.rows_served - before.rows_served, 0);
  EXPECT_LE(after.rows_served - before.rows_served, (steps + 1) * kUsedIds);
  EXPECT_EQ(after.sparse_updates - before.sparse_updates, steps);
  EXPECT_EQ(after.dense_updates - before.dense_updates, 0);
  EXPECT_LE(after.rows_updated - before.rows_updated, steps * kUsedIds);
}

INSTANTIATE_TEST_SUITE_P(RemoteVariable, TwoPsFit, ::testing::Values("sgd_momentum", "adam"));

}  // namespace
}  // namespace strata::testing
