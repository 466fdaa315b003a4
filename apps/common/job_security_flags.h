// The apps' flags for securing a multi-process job (strata::distribute::JobSecurity,
// distribute/cluster/job_security.h): --job_token_file, --tls_cert_file, --tls_key_file,
// --tls_ca_file and --bind_host. Each overrides its environment variable (STRATA_JOB_TOKEN_FILE,
// ...); one left empty keeps the variable's value, so strata-launch's token reaches an app through
// the environment.
#pragma once

#include "distribute/cluster/job_security.h"

namespace apps {

// The environment's settings with the flags that are set put over them.
strata::distribute::JobSecurity job_security_from_flags();

// What a distributed app calls once its flags are parsed, before any strategy or server is made:
// sets the process's JobSecurity from these flags over the environment's. FlagError naming the
// file (or the setting) and the fix when one cannot be used.
void apply_job_security_flags();

}  // namespace apps
