#include "distribute/cluster/job_security.h"

#include <cstdlib>
#include <mutex>

#include "distribute/cluster/grpc_security.h"

namespace strata::distribute {

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The process's settings: null until first used or set.
std::mutex g_mutex;
std::shared_ptr<const LoadedJobSecurity> g_loaded;

}  // namespace

JobSecurity JobSecurity::from_environment() {
  JobSecurity security;
  security.token_file = env(kJobTokenFileEnv);
  security.tls_cert_file = env(kTlsCertFileEnv);
  security.tls_key_file = env(kTlsKeyFileEnv);
  security.tls_ca_file = env(kTlsCaFileEnv);
  security.bind_host = env(kBindHostEnv);
  return security;
}

JobSecurity job_security() {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_loaded) return g_loaded->settings;
  }
  return JobSecurity::from_environment();
}

std::shared_ptr<const LoadedJobSecurity> loaded_job_security() {
  std::lock_guard<std::mutex> lock(g_mutex);
  // Read once: every server and channel of the process uses the same token, and the files are
  // not read again for each call.
  if (!g_loaded) g_loaded = load_job_security(JobSecurity::from_environment());
  return g_loaded;
}

void set_job_security(const JobSecurity& security) {
  std::shared_ptr<const LoadedJobSecurity> loaded = load_job_security(security);  // may throw
  std::lock_guard<std::mutex> lock(g_mutex);
  g_loaded = std::move(loaded);
}

void reset_job_security() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_loaded.reset();
}

}  // namespace strata::distribute
