#include "distribute/parameter_server/grpc_channel.h"

#include <algorithm>
#include <climits>

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

}  // namespace strata::distribute
