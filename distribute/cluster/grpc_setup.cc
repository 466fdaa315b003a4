#include "distribute/cluster/grpc_setup.h"

#include <algorithm>
#include <climits>

#include "distribute/cluster/grpc_security.h"
#include "distribute/cluster/loopback_address.h"
#include "distribute/errors.h"

namespace strata::distribute {

std::shared_ptr<grpc::Channel> make_grpc_channel(const std::string& address,
                                                 const ChannelSettings& settings) {
  grpc::ChannelArguments args;
  const int max_bytes = int(std::min<size_t>(settings.max_message_bytes, INT_MAX));
  args.SetMaxSendMessageSize(max_bytes);
  args.SetMaxReceiveMessageSize(max_bytes);
  // Pings, also between calls: a peer whose process or host died is seen within keepalive_time
  // + keepalive_timeout instead of at an rpc deadline, and idle connections stay known alive
  // through NATs and firewalls.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, int(settings.keepalive_time.count()));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, int(settings.keepalive_timeout.count()));
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Tasks start in any order and workers restart: dial again within a second, not after gRPC's
  // default backoff of up to two minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // Despite its name, gRPC takes "min reconnect backoff" as the least time one connection
  // attempt (TCP connect, HTTP/2 and TLS handshakes) is given: at 100 ms, attempts on a busy
  // machine were cut off ("tcp handshaker shutdown") and calls failed as unreachable. A peer
  // that is not up refuses at once, and the next attempt still follows the backoff above.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 10000);
  // The job's token on every call, TLS when the job uses it (job_security.h).
  const std::shared_ptr<const LoadedJobSecurity> security = loaded_job_security();
  // Messages keep the address as configured; the dial goes to the loopback for "localhost".
  const std::string target = dialable_address(address);
  if (security->uses_tls() && target != address) {
    // The server's certificate is checked against the host as the cluster spec names it.
    args.SetSslTargetNameOverride(address.substr(0, address.rfind(':')));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      target, channel_credentials(*security), args, token_interceptors(*security));
}

std::unique_ptr<grpc::Server> start_grpc_server(const std::string& bind_address,
                                                grpc::Service* service, size_t max_message_bytes,
                                                std::chrono::milliseconds min_ping_interval,
                                                const std::string& what, const std::string& task,
                                                int* port) {
  const std::shared_ptr<const LoadedJobSecurity> security = loaded_job_security();
  // The task's own address, unless every interface (or another host) was asked for.
  const std::string listen = bind_address_for(bind_address, security->settings.bind_host);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(dialable_address(listen), server_credentials(*security), port);
  builder.RegisterService(service);
  const int max_bytes = int(std::min<size_t>(max_message_bytes, INT_MAX));
  builder.SetMaxReceiveMessageSize(max_bytes);
  builder.SetMaxSendMessageSize(max_bytes);
  // gRPC binds with SO_REUSEPORT by default: a second server on a taken port would "bind" and
  // share (steal) the first one's connections instead of failing.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Clients' keepalive pings, also between calls, are permitted.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             int(min_ping_interval.count()));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || *port == 0) {
    throw CoordinationError(
        what + ": cannot listen on '" + listen + "': the port is taken (another job, or an "
        "earlier run still exiting), the host is not one of this machine's addresses" +
        (security->uses_tls() ? ", or the TLS key does not match the certificate" : "") +
        ". Give the " + task + " task a free port in the cluster spec, or stop the process "
        "holding it; where the cluster spec names the task by an address that is not this "
        "machine's own (a Kubernetes Service), bind every interface: " + kBindHostEnv +
        "=0.0.0.0 or --bind_host=0.0.0.0");
  }
  return server;
}

}  // namespace strata::distribute
