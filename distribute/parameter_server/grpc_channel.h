// Internal: the gRPC channel every client of a parameter-server cluster dials (ps and worker
// services alike): bounded messages, keepalive pings that see a dead peer within seconds, quick
// reconnects to a peer that was briefly gone.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "distribute/parameter_server/parameter_server_options.h"

namespace strata::distribute {

std::shared_ptr<grpc::Channel> make_channel(const std::string& address,
                                            const ParameterServerOptions& options);

}  // namespace strata::distribute
