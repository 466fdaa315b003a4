#include "distribute/parameter_server/grpc_channel.h"

#include <algorithm>
#include <climits>

#include "distribute/coordination/key_value_store.h"
#include "distribute/loopback_address.h"

namespace strata::distribute {

std::shared_ptr<grpc::Channel> make_channel(const std::string& address,
                                            const ParameterServerOptions& options) {
  grpc::ChannelArguments args;
  const int max_bytes = int(std::min<size_t>(options.max_message_bytes, INT_MAX));
  args.SetMaxSendMessageSize(max_bytes);
  args.SetMaxReceiveMessageSize(max_bytes);
  // Frequent pings, also between calls, so that a peer whose process or host died is seen within
  // keepalive_time + keepalive_timeout instead of at the rpc deadline (the services permit them).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, int(options.keepalive_time.count()));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, int(options.keepalive_timeout.count()));
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // A peer that was briefly unreachable (a restarted worker) is dialled again within a second,
  // not after gRPC's default backoff of up to two minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return grpc::CreateCustomChannel(dialable_address(address), grpc::InsecureChannelCredentials(),
                                   args);
}

std::unique_ptr<grpc::Server> start_server(const std::string& bind_address, grpc::Service* service,
                                           size_t max_message_bytes, const std::string& task_kind,
                                           int* port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(dialable_address(bind_address), grpc::InsecureServerCredentials(), port);
  builder.RegisterService(service);
  const int max_bytes = int(std::min<size_t>(max_message_bytes, INT_MAX));
  builder.SetMaxReceiveMessageSize(max_bytes);
  builder.SetMaxSendMessageSize(max_bytes);
  // As the coordination service: no SO_REUSEPORT (a taken port fails here instead of sharing),
  // and clients' keepalive pings (every keepalive_time, also between calls) are permitted, not
  // answered with GOAWAY "too_many_pings".
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 500);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || *port == 0) {
    throw CoordinationError(
        task_kind + " server: cannot listen on '" + bind_address + "': the port is taken "
        "(another job, or an earlier run still exiting) or the host is not one of this "
        "machine's addresses. Give the " + task_kind + " task a free port in the cluster spec, or "
        "stop the process holding it");
  }
  return server;
}

}  // namespace strata::distribute
