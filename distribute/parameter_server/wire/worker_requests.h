// Internal: the requests a WorkerClient sends (worker_service.proto), made from the
// coordinator's Closure and WorkerSetup. One place for the encoding, so that what the fuzz
// target records as real traffic is exactly what the coordinator sends.
#pragma once

#include "distribute/parameter_server/closure_runner.h"
#include "distribute/parameter_server/wire/worker_service.pb.h"

namespace strata::distribute {

// Throws what ps_wire::to_proto throws for an argument that cannot be encoded.
parameter_server_pb::RunClosureRequest run_closure_request(const Closure& closure);
parameter_server_pb::PrepareRequest prepare_request(const WorkerSetup& setup);

}  // namespace strata::distribute
