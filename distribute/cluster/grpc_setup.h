// Internal: how every gRPC channel and server of a multi-process job is set up (the coordination
// service and its clients, the ps and worker services and theirs): bounded messages, client
// keepalive pings (servers permit them, so an idle or dead peer is seen instead of answered with
// GOAWAY "too_many_pings"), quick reconnects to a peer that is not up yet or was briefly gone,
// "localhost" dialled and bound as the loopback, no SO_REUSEPORT; and the job's security
// (job_security.h): the token on every call, TLS when the job uses it, the bind host. Each
// handler of a server made here checks the token first (grpc_security.h's refuse_outsider).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

namespace strata::distribute {

struct ChannelSettings {
  size_t max_message_bytes = size_t(256) << 20;
  std::chrono::milliseconds keepalive_time{30000};
  std::chrono::milliseconds keepalive_timeout{10000};
};

// ValueError naming the file when the job's token or TLS files cannot be used.
std::shared_ptr<grpc::Channel> make_grpc_channel(const std::string& address,
                                                 const ChannelSettings& settings);

// Serves `service` on bind_address, the task's own address from the cluster spec (port 0: a
// free one, written to *port), or on its port at the job's bind host when one is set; accepts
// client pings as often as every `min_ping_interval`. CoordinationError "<what>: cannot listen
// on '<address>' ..." naming the port's owner `task` ("coordinator", "ps", "worker") in the fix;
// ValueError naming the file when the job's token or TLS files cannot be used.
std::unique_ptr<grpc::Server> start_grpc_server(const std::string& bind_address,
                                                grpc::Service* service, size_t max_message_bytes,
                                                std::chrono::milliseconds min_ping_interval,
                                                const std::string& what, const std::string& task,
                                                int* port);

}  // namespace strata::distribute
