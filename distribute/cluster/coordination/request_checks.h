// Internal: what the coordination service checks in a request before its state is touched
// (coordination_state.cc): every field a task sends is bounded and validated, and a refusal is
// INVALID_ARGUMENT naming the operation and the field. Bytes a request carries (keys, ids, job
// names) appear in messages only through printable(): escaped and cut short.
#pragma once

#include <grpcpp/support/status.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "distribute/cluster/coordination/coordination.pb.h"

namespace strata::distribute::coordination_internal {

// `bytes` in quotes with printable ASCII kept, other bytes as \xNN, and at most `limit` bytes
// shown ("...'" and the full size after them when cut).
std::string printable(std::string_view bytes, size_t limit = 200);

// The request's task: present, a job name of 1 to 256 bytes, an index >= 0.
grpc::Status check_task(const std::string& operation, bool present,
                        const coordination_pb::TaskId& task);

// A key or barrier id (`field`): 1 to kMaxCoordinationKeyBytes bytes.
grpc::Status check_name(const std::string& operation, const char* field, const std::string& name);

// A wait's timeout (`field`, in ms): 0 to kMaxCoordinationWait.
grpc::Status check_wait(const std::string& operation, const char* field, int64_t timeout_ms);

}  // namespace strata::distribute::coordination_internal
