#include "distribute/cluster/coordination/coordination_handler.h"

#include "distribute/cluster/grpc_security.h"

namespace strata::distribute::coordination_internal {

namespace {
constexpr const char* kService = "the coordination service";
}  // namespace

grpc::ServerUnaryReactor* CoordinationHandler::Register(grpc::CallbackServerContext* context,
                                                        const pb::RegisterRequest* request,
                                                        pb::RegisterResponse*) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.register_task(*request, reactor);
  return reactor;
}

grpc::ServerUnaryReactor* CoordinationHandler::Heartbeat(grpc::CallbackServerContext* context,
                                                         const pb::HeartbeatRequest* request,
                                                         pb::HeartbeatResponse* response) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.heartbeat(*request, response, reactor);
  return reactor;
}

grpc::ServerUnaryReactor* CoordinationHandler::Barrier(grpc::CallbackServerContext* context,
                                                       const pb::BarrierRequest* request,
                                                       pb::BarrierResponse*) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.barrier(*request, reactor);
  return reactor;
}

grpc::ServerUnaryReactor* CoordinationHandler::Set(grpc::CallbackServerContext* context,
                                                   const pb::SetRequest* request,
                                                   pb::SetResponse*) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.set(*request, reactor);
  return reactor;
}

grpc::ServerUnaryReactor* CoordinationHandler::Get(grpc::CallbackServerContext* context,
                                                   const pb::GetRequest* request,
                                                   pb::GetResponse* response) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.get(*request, response, reactor);
  return reactor;
}

grpc::ServerUnaryReactor* CoordinationHandler::SetMany(grpc::CallbackServerContext* context,
                                                       const pb::SetManyRequest* request,
                                                       pb::SetManyResponse*) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.set_many(*request, reactor);
  return reactor;
}

grpc::ServerUnaryReactor* CoordinationHandler::GetMany(grpc::CallbackServerContext* context,
                                                       const pb::GetManyRequest* request,
                                                       pb::GetManyResponse* response) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.get_many(*request, response, reactor);
  return reactor;
}

grpc::ServerUnaryReactor* CoordinationHandler::Add(grpc::CallbackServerContext* context,
                                                   const pb::AddRequest* request,
                                                   pb::AddResponse* response) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.add(*request, response, reactor);
  return reactor;
}

grpc::ServerUnaryReactor* CoordinationHandler::Erase(grpc::CallbackServerContext* context,
                                                     const pb::EraseRequest* request,
                                                     pb::EraseResponse*) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.erase(*request, reactor);
  return reactor;
}

grpc::ServerUnaryReactor* CoordinationHandler::ReportError(
    grpc::CallbackServerContext* context, const pb::ReportErrorRequest* request,
    pb::ReportErrorResponse* response) {
  if (auto* refused = refuse_outsider(context, kService)) return refused;
  auto* reactor = context->DefaultReactor();
  state_.report_error(*request, response, reactor);
  return reactor;
}

}  // namespace strata::distribute::coordination_internal
