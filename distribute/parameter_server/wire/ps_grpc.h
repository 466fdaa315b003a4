// Internal: the gRPC settings of a parameter-server cluster's channels and servers, from
// ParameterServerOptions (grpc_setup.h does the setting up).
#pragma once

#include <chrono>

#include "distribute/cluster/grpc_setup.h"
#include "distribute/parameter_server/parameter_server_options.h"

namespace strata::distribute {

inline ChannelSettings channel_settings(const ParameterServerOptions& options) {
  ChannelSettings settings;
  settings.max_message_bytes = options.max_message_bytes;
  settings.keepalive_time = options.keepalive_time;
  settings.keepalive_timeout = options.keepalive_timeout;
  return settings;
}

// Clients ping every keepalive_time (1 s by default); the ps and worker servers accept a ping
// every 500 ms.
inline constexpr std::chrono::milliseconds kPsMinPingInterval{500};

}  // namespace strata::distribute
