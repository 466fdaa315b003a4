// Internal: JobSecurity (job_security.h) applied to gRPC. grpc_setup.cc makes every channel and
// server with it (TLS credentials, the token interceptor, the bind host); every handler of every
// service calls refuse_outsider() first.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <string_view>

#include "distribute/cluster/job_security.h"

namespace strata::distribute {

// The settings with their files read.
struct LoadedJobSecurity {
  JobSecurity settings;
  std::string token;  // "" without a token
  std::string cert_pem, key_pem, ca_pem;
  bool uses_tls() const { return !ca_pem.empty(); }
};

// The call metadata key carrying the token.
inline constexpr const char* kJobTokenMetadataKey = "strata-job-token";

// Reads and checks `settings`' files (ValueError naming the file and the fix).
std::shared_ptr<const LoadedJobSecurity> load_job_security(const JobSecurity& settings);

// The settings in force (job_security()), loaded once and kept until set_job_security or
// reset_job_security. ValueError as load_job_security.
std::shared_ptr<const LoadedJobSecurity> loaded_job_security();

// Channel credentials: SSL with this task's certificate, key and the job's CA under TLS,
// insecure otherwise.
std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const LoadedJobSecurity& security);
// Server credentials: SSL requiring and verifying a client certificate signed by the job's CA
// under TLS, insecure otherwise.
std::shared_ptr<grpc::ServerCredentials> server_credentials(const LoadedJobSecurity& security);
// Interceptors adding the token to every call (none without a token).
std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
token_interceptors(const LoadedJobSecurity& security);

// `address` ("host:port") with its host replaced by bind_host when one is set ("[::]:port" for
// an IPv6 host); unchanged otherwise.
std::string bind_address_for(const std::string& address, const std::string& bind_host);

// Whether `given` is `expected`, in time that depends on neither's content.
bool same_token(std::string_view given, std::string_view expected);

// OK when the call carries the job's token (or the job has none); else UNAUTHENTICATED naming
// `service`, the caller's address and the fix. Never throws.
grpc::Status check_job_token(const grpc::ServerContextBase& context, const char* service);

// A callback handler's first line:
//   if (auto* refused = refuse_outsider(context, "ps server")) return refused;
// the call's default reactor, finished with check_job_token's refusal, or null when the call is
// the job's (the handler then takes the default reactor itself, as it would without this line).
grpc::ServerUnaryReactor* refuse_outsider(grpc::CallbackServerContext* context,
                                          const char* service);

}  // namespace strata::distribute
