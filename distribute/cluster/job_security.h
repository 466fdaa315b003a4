// JobSecurity: who may steer a multi-process job, and where its servers listen. It covers every
// gRPC server of a job (the coordination service of MultiWorkerMirroredStrategy, the ps and
// worker servers of ParameterServerStrategy) and every channel to them.
//
//   - A job token: a file whose text every task holds. Every call carries it (gRPC metadata
//     "strata-job-token"); every server refuses a call without it, or with another job's, as
//     UNAUTHENTICATED naming the caller's address. Anyone who can reach a port can otherwise
//     end the job (register as a task again, post an error, shut a ps down).
//   - TLS (gRPC's SSL credentials), mutual: each task presents a certificate signed by the
//     job's CA and requires one from its peer, so traffic is encrypted and only holders of a
//     certificate of the job's CA can connect. A server's certificate must name its host as the
//     cluster spec does (a DNS or IP subject alternative name).
//   - Binding: a server listens on its own task's address from the cluster spec (TF_CONFIG),
//     not on every interface as TensorFlow's servers do; bind_host "0.0.0.0" (or "::") asks for
//     every interface, which Kubernetes needs when a task's address is a Service's name that
//     resolves to a cluster IP rather than the pod's own address.
//
// Each setting comes from an environment variable (what strata-launch and a cluster manager
// set for every task) unless set_job_security() replaced them (the apps' --job_token_file,
// --tls_cert_file, --tls_key_file, --tls_ca_file and --bind_host flags do):
//
//   STRATA_JOB_TOKEN_FILE=/secrets/job-token    (printable text, e.g. `openssl rand -hex 32`)
//   STRATA_TLS_CERT_FILE / STRATA_TLS_KEY_FILE / STRATA_TLS_CA_FILE   (PEM; all three or none)
//   STRATA_BIND_HOST=0.0.0.0
//
// Channels and servers take the TLS files and bind host in force when they are made; servers
// check each call against the token in force when it arrives (one job, one token, per process).
#pragma once

#include <string>

namespace strata::distribute {

struct JobSecurity {
  std::string token_file;     // "" : no token (every caller is served)
  std::string tls_cert_file;  // this task's certificate chain (PEM)
  std::string tls_key_file;   // its private key (PEM)
  std::string tls_ca_file;    // the job's CA certificate(s) (PEM): peers must be signed by it
  std::string bind_host;      // "" : the task's own host; "0.0.0.0" or "::" : every interface

  bool uses_tls() const {
    return !tls_cert_file.empty() || !tls_key_file.empty() || !tls_ca_file.empty();
  }

  // The settings the environment variables above give ("" where one is unset).
  static JobSecurity from_environment();
};

// The environment variables' names.
inline constexpr const char* kJobTokenFileEnv = "STRATA_JOB_TOKEN_FILE";
inline constexpr const char* kTlsCertFileEnv = "STRATA_TLS_CERT_FILE";
inline constexpr const char* kTlsKeyFileEnv = "STRATA_TLS_KEY_FILE";
inline constexpr const char* kTlsCaFileEnv = "STRATA_TLS_CA_FILE";
inline constexpr const char* kBindHostEnv = "STRATA_BIND_HOST";

// The settings in force: set_job_security's, else the environment's (read once, at first use).
JobSecurity job_security();

// Reads and checks every file `security` names and makes it the process's settings for every
// server and channel made from now on. ValueError naming the file (or the setting) and the fix:
// a token file missing, unreadable, empty, too long or not printable text; TLS with one of the
// three files missing or not PEM; a bind_host with a port or brackets.
void set_job_security(const JobSecurity& security);

// Forgets set_job_security's settings: the environment's are read again at next use.
void reset_job_security();

}  // namespace strata::distribute
