// Internal: the coordination service's gRPC face (coordination_service.cc serves it; the fuzz
// target tests/fuzz/fuzz_coordination_service.cc calls it in-process). Each method refuses a
// caller without the job's token (grpc_security.h), then hands the call to the job's state,
// which finishes the reactor at once or parks it (a get or barrier that waits).
#pragma once

#include "distribute/cluster/coordination/coordination.grpc.pb.h"
#include "distribute/cluster/coordination/coordination_state.h"

namespace strata::distribute::coordination_internal {

class CoordinationHandler final : public pb::Coordination::CallbackService {
 public:
  explicit CoordinationHandler(CoordinationState& state) : state_(state) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context,
                                     const pb::RegisterRequest* request,
                                     pb::RegisterResponse* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const pb::HeartbeatRequest* request,
                                      pb::HeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* Barrier(grpc::CallbackServerContext* context,
                                    const pb::BarrierRequest* request,
                                    pb::BarrierResponse* response) override;
  grpc::ServerUnaryReactor* Set(grpc::CallbackServerContext* context,
                                const pb::SetRequest* request, pb::SetResponse* response) override;
  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* context,
                                const pb::GetRequest* request, pb::GetResponse* response) override;
  grpc::ServerUnaryReactor* Add(grpc::CallbackServerContext* context,
                                const pb::AddRequest* request, pb::AddResponse* response) override;
  grpc::ServerUnaryReactor* Erase(grpc::CallbackServerContext* context,
                                  const pb::EraseRequest* request,
                                  pb::EraseResponse* response) override;
  grpc::ServerUnaryReactor* ReportError(grpc::CallbackServerContext* context,
                                        const pb::ReportErrorRequest* request,
                                        pb::ReportErrorResponse* response) override;

  grpc::ServerUnaryReactor* SetMany(grpc::CallbackServerContext* context,
                                    const pb::SetManyRequest* request,
                                    pb::SetManyResponse* response) override;
  grpc::ServerUnaryReactor* GetMany(grpc::CallbackServerContext* context,
                                    const pb::GetManyRequest* request,
                                    pb::GetManyResponse* response) override;

 private:
  CoordinationState& state_;
};

}  // namespace strata::distribute::coordination_internal
