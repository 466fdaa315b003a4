// ParameterServerOptions: the size and time limits of a ps task's ParameterService and of the
// ParameterClients that call it.
#pragma once

#include <chrono>
#include <cstddef>

namespace strata::distribute {

struct ParameterServerOptions {
  // Larger requests and replies are refused (RESOURCE_EXHAUSTED): a variable larger than this
  // must be sharded (variable_partitioner). The service and its clients must agree.
  size_t max_message_bytes = size_t(256) << 20;
  // The deadline of every client call: a ps that hangs fails the call after this long.
  std::chrono::milliseconds rpc_timeout{60000};
  // Client keepalive pings: a ps whose process or host died is seen within
  // keepalive_time + keepalive_timeout even while a call waits (the service permits them).
  std::chrono::milliseconds keepalive_time{1000};
  std::chrono::milliseconds keepalive_timeout{3000};
  // How long a task waits for a ps to come up before its first variable is created there (the
  // tasks of a job start in any order).
  std::chrono::milliseconds connect_timeout{120000};
};

}  // namespace strata::distribute
