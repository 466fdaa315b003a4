// Internal: the gRPC channel every client of a parameter-server cluster dials and the server
// every ps and worker task serves on (both alike): bounded messages, keepalive pings that see a
// dead peer within seconds (and servers that permit them), quick reconnects to a peer that was
// briefly gone.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "distribute/parameter_server/parameter_server_options.h"

namespace strata::distribute {

std::shared_ptr<grpc::Channel> make_channel(const std::string& address,
                                            const ParameterServerOptions& options);

// Serves `service` on bind_address (port 0: a free one, written to *port). CoordinationError
// naming `task_kind` ("ps", "worker") and the address when it cannot bind.
std::unique_ptr<grpc::Server> start_server(const std::string& bind_address, grpc::Service* service,
                                           size_t max_message_bytes, const std::string& task_kind,
                                           int* port);

}  // namespace strata::distribute
