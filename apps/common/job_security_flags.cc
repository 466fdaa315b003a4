#include "apps/common/job_security_flags.h"

#include <string>

#include <absl/flags/flag.h>
#include <strata/strata.h>

#include "apps/common/flag_error.h"

ABSL_FLAG(std::string, job_token_file, "",
          "File holding the job's token (the same file on every task; e.g. `openssl rand -hex "
          "32`): every call between the tasks carries it and every server refuses calls without "
          "it. Empty: STRATA_JOB_TOKEN_FILE, else no token. strata-launch makes one per job.");
ABSL_FLAG(std::string, tls_cert_file, "",
          "This task's TLS certificate (PEM), signed by --tls_ca_file; with --tls_key_file and "
          "--tls_ca_file every connection of the job is mutual TLS. Empty: STRATA_TLS_CERT_FILE.");
ABSL_FLAG(std::string, tls_key_file, "",
          "The private key of --tls_cert_file (PEM). Empty: STRATA_TLS_KEY_FILE.");
ABSL_FLAG(std::string, tls_ca_file, "",
          "The job's CA certificate (PEM): peers must present a certificate it signed. Empty: "
          "STRATA_TLS_CA_FILE.");
ABSL_FLAG(std::string, bind_host, "",
          "Where this task's servers listen: empty for the host of its own address in TF_CONFIG "
          "(or STRATA_BIND_HOST); 0.0.0.0 or :: for every interface (Kubernetes, where a task's "
          "address is a Service that resolves to another address than the pod's).");

namespace apps {

strata::distribute::JobSecurity job_security_from_flags() {
  strata::distribute::JobSecurity security = strata::distribute::JobSecurity::from_environment();
  const auto take = [](const absl::Flag<std::string>& flag, std::string& setting) {
    const std::string value = absl::GetFlag(flag);
    if (!value.empty()) setting = value;
  };
  take(FLAGS_job_token_file, security.token_file);
  take(FLAGS_tls_cert_file, security.tls_cert_file);
  take(FLAGS_tls_key_file, security.tls_key_file);
  take(FLAGS_tls_ca_file, security.tls_ca_file);
  take(FLAGS_bind_host, security.bind_host);
  return security;
}

void apply_job_security_flags() {
  try {
    strata::distribute::set_job_security(job_security_from_flags());
  } catch (const strata::ValueError& e) {
    throw FlagError(e.what());
  }
}

}  // namespace apps
