#include "distribute/cluster/grpc_security.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "framework/core/error.h"

namespace strata::distribute {

namespace {

constexpr size_t kMaxTokenBytes = 4096;           // gRPC's metadata is limited to 8 KiB a call
constexpr size_t kMaxPemBytes = size_t(1) << 20;  // a certificate chain is a few KiB

// "job token file '/x' (STRATA_JOB_TOKEN_FILE, --job_token_file)".
std::string describe_file(const std::string& what, const std::string& path, const char* env,
                          const char* flag) {
  return what + " '" + path + "' (" + env + ", --" + flag + ")";
}

// The file's bytes, at most `limit` of them: ValueError naming it when it cannot be read, is
// empty or is larger.
std::string read_small_file(const std::string& described, const std::string& path, size_t limit,
                            const std::string& fix) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ValueError(described + " cannot be read: " + std::strerror(errno) + ". " + fix);
  }
  std::string bytes(limit + 1, '\0');
  in.read(bytes.data(), std::streamsize(bytes.size()));
  if (in.bad()) {
    throw ValueError(described + " cannot be read: " + std::strerror(errno) + ". " + fix);
  }
  bytes.resize(size_t(in.gcount()));
  if (bytes.size() > limit) {
    throw ValueError(described + " is larger than " + std::to_string(limit) +
                     " bytes: it is not the file meant. " + fix);
  }
  if (bytes.empty()) throw ValueError(described + " is empty. " + fix);
  return bytes;
}

std::string read_token(const std::string& path) {
  const std::string described =
      describe_file("the job token file", path, kJobTokenFileEnv, "job_token_file");
  const std::string fix =
      "Write the job's token there, the same on every task (e.g. `openssl rand -hex 32 > FILE; "
      "chmod 600 FILE`), or leave the setting unset to run without a token";
  std::string text = read_small_file(described, path, kMaxTokenBytes, fix);
  // A trailing newline (echo, an editor) or surrounding spaces are not part of the token.
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.back())) text.pop_back();
  size_t start = 0;
  while (start < text.size() && space(text[start])) ++start;
  text.erase(0, start);
  if (text.empty()) throw ValueError(described + " holds only white space. " + fix);
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c > 0x7e) {   // what gRPC metadata carries as text
      throw ValueError(described + " holds a byte that is not printable ASCII (" +
                       std::to_string(int(c)) + " at offset " + std::to_string(i) +
                       "): the token travels as text in every call. " + fix);
    }
  }
  return text;
}

std::string read_pem(const std::string& what, const std::string& path, const char* env,
                     const char* flag, const char* marker) {
  const std::string described = describe_file(what, path, env, flag);
  const std::string fix = "Give the PEM file made for this job (see README's 'Securing a job')";
  std::string pem = read_small_file(described, path, kMaxPemBytes, fix);
  if (pem.find("-----BEGIN ") == std::string::npos || pem.find(marker) == std::string::npos) {
    throw ValueError(described + " is not PEM: it has no '-----BEGIN ...' block with '" +
                     marker + "'. " + fix);
  }
  return pem;
}

class TokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(std::shared_ptr<const std::string> token) : token_(std::move(token)) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace(kJobTokenMetadataKey, *token_);
    }
    methods->Proceed();
  }

 private:
  std::shared_ptr<const std::string> token_;
};

class TokenInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(std::shared_ptr<const std::string> token)
      : token_(std::move(token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new TokenInterceptor(token_);
  }

 private:
  std::shared_ptr<const std::string> token_;
};

}  // namespace

std::shared_ptr<const LoadedJobSecurity> load_job_security(const JobSecurity& settings) {
  auto loaded = std::make_shared<LoadedJobSecurity>();
  loaded->settings = settings;
  if (!settings.token_file.empty()) loaded->token = read_token(settings.token_file);
  if (settings.uses_tls()) {
    const struct {
      const std::string& path;
      const char* env;
      const char* flag;
    } files[] = {{settings.tls_cert_file, kTlsCertFileEnv, "tls_cert_file"},
                 {settings.tls_key_file, kTlsKeyFileEnv, "tls_key_file"},
                 {settings.tls_ca_file, kTlsCaFileEnv, "tls_ca_file"}};
    for (const auto& file : files) {
      if (file.path.empty()) {
        throw ValueError(std::string("TLS needs a certificate, its key and the job's CA, but ") +
                         file.env + " (--" + file.flag + ") is not set while " +
                         "the others are: set all three on every task, or none");
      }
    }
    loaded->cert_pem = read_pem("the TLS certificate file", settings.tls_cert_file,
                                kTlsCertFileEnv, "tls_cert_file", "CERTIFICATE");
    loaded->key_pem = read_pem("the TLS key file", settings.tls_key_file, kTlsKeyFileEnv,
                               "tls_key_file", "PRIVATE KEY");
    loaded->ca_pem = read_pem("the TLS CA file", settings.tls_ca_file, kTlsCaFileEnv,
                              "tls_ca_file", "CERTIFICATE");
  }
  std::string host = settings.bind_host;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.find_first_of("[]/ ") != std::string::npos ||
      (host.find(':') != std::string::npos && host.find(':') == host.rfind(':'))) {
    throw ValueError("bind host '" + settings.bind_host + "' (" + kBindHostEnv +
                     ", --bind_host) is not a host: give an address or name without a port, "
                     "e.g. 0.0.0.0 or :: for every interface (the port is the task's own)");
  }
  loaded->settings.bind_host = host;
  return loaded;
}

std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const LoadedJobSecurity& security) {
  if (!security.uses_tls()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = security.ca_pem;
  options.pem_private_key = security.key_pem;
  options.pem_cert_chain = security.cert_pem;
  return grpc::SslCredentials(options);
}

std::shared_ptr<grpc::ServerCredentials> server_credentials(const LoadedJobSecurity& security) {
  if (!security.uses_tls()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = security.ca_pem;
  options.pem_key_cert_pairs.push_back({security.key_pem, security.cert_pem});
  return grpc::SslServerCredentials(options);
}

std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
token_interceptors(const LoadedJobSecurity& security) {
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> result;
  if (!security.token.empty()) {
    result.push_back(std::make_unique<TokenInterceptorFactory>(
        std::make_shared<const std::string>(security.token)));
  }
  return result;
}

std::string bind_address_for(const std::string& address, const std::string& bind_host) {
  if (bind_host.empty()) return address;
  const size_t colon = address.rfind(':');
  const std::string port = colon == std::string::npos ? "" : address.substr(colon);
  if (bind_host.find(':') != std::string::npos) return "[" + bind_host + "]" + port;
  return bind_host + port;
}

bool same_token(std::string_view given, std::string_view expected) {
  // Every byte of `expected` is looked at whatever `given` holds: how long the comparison takes
  // tells a caller nothing about how much of its guess was right.
  volatile unsigned char differ = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    differ = differ | (g ^ static_cast<unsigned char>(expected[i]));
  }
  return differ == 0;
}

grpc::Status check_job_token(const grpc::ServerContextBase& context, const char* service) {
  std::shared_ptr<const LoadedJobSecurity> security;
  try {
    security = loaded_job_security();
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        std::string(service) + ": its job security settings fail: " + e.what());
  }
  if (security->token.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(kJobTokenMetadataKey);
  if (found != metadata.end() &&
      same_token(std::string_view(found->second.data(), found->second.size()), security->token)) {
    return grpc::Status::OK;
  }
  return grpc::Status(
      grpc::StatusCode::UNAUTHENTICATED,
      std::string(service) + " refused a call from " + context.peer() + ": it carries " +
          (found == metadata.end() ? "no job token" : "a job token that is not this job's") +
          ". Only the job's own tasks may call it: give every task of the job the same token "
          "file (" + kJobTokenFileEnv + " or --job_token_file; strata-launch gives the tasks it "
          "starts one)");
}

grpc::ServerUnaryReactor* refuse_outsider(grpc::CallbackServerContext* context,
                                          const char* service) {
  grpc::Status status = check_job_token(*context, service);
  if (status.ok()) return nullptr;
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace strata::distribute
