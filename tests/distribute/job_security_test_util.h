// What the tests of a job's security share: a scratch folder, files in it, the process's
// JobSecurity set for one test and put back after, raw gRPC channels that bypass Strata's own
// (an outsider's), and a CA with certificates made by the openssl command line.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "distribute/cluster/job_security.h"

namespace strata::testing {

// A folder of its own under the temporary directory, removed with everything in it.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    static int count = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("strata_" + name + "_" + std::to_string(getpid()) + "_" + std::to_string(count++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  // Writes `text` to the file `name` here; its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = (path_ / name).string();
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The process's JobSecurity for one test; the environment's again afterwards.
class ScopedJobSecurity {
 public:
  explicit ScopedJobSecurity(const distribute::JobSecurity& security) {
    distribute::set_job_security(security);
  }
  ~ScopedJobSecurity() { distribute::reset_job_security(); }
  ScopedJobSecurity(const ScopedJobSecurity&) = delete;
  ScopedJobSecurity& operator=(const ScopedJobSecurity&) = delete;
};

// A channel as a process outside the job would open it: gRPC's own, with `credentials`
// (plaintext by default) and none of Strata's settings (no token).
inline std::shared_ptr<grpc::Channel> outsider_channel(
    const std::string& address,
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials()) {
  return grpc::CreateChannel(address, credentials);
}

// A client context with a deadline `seconds` away and, unless empty, `token` as the job token.
inline std::unique_ptr<grpc::ClientContext> outsider_context(const std::string& token = "",
                                                             int seconds = 10) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  if (!token.empty()) context->AddMetadata("strata-job-token", token);
  return context;
}

// Runs a shell command in `dir`; false (with its output in the test log) when it fails.
inline bool run_shell(const std::string& dir, const std::string& command) {
  const std::string full = "cd '" + dir + "' && (" + command + ") > shell.log 2>&1";
  if (std::system(full.c_str()) == 0) return true;
  std::ifstream log(dir + "/shell.log");
  ADD_FAILURE() << "command failed: " << command << "\n" << std::string(
      std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  return false;
}

// A CA and, signed by it, one certificate + key for every task, naming localhost and 127.0.0.1
// (what the tests' cluster specs say). `name` prefixes the files: <name>_ca.pem,
// <name>_cert.pem, <name>_key.pem. Made with the openssl command line (scripts/setup installs
// it); false when that fails.
inline bool make_test_ca(const ScratchDir& dir, const std::string& name) {
  const std::string n = name;
  const std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=" + n + " test CA' "
      "-keyout " + n + "_ca_key.pem -out " + n + "_ca.pem && "
      "openssl req -newkey rsa:2048 -nodes -subj '/CN=localhost' -keyout " + n + "_key.pem "
      "-out " + n + "_req.pem && "
      "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nextendedKeyUsage=serverAuth,"
      "clientAuth\\n' > " + n + "_ext.cnf && "
      "openssl x509 -req -in " + n + "_req.pem -CA " + n + "_ca.pem -CAkey " + n + "_ca_key.pem "
      "-CAcreateserial -days 2 -extfile " + n + "_ext.cnf -out " + n + "_cert.pem";
  return run_shell(dir.path(""), command);
}

// The JobSecurity of the CA `name` made by make_test_ca.
inline distribute::JobSecurity tls_settings(const ScratchDir& dir, const std::string& name) {
  distribute::JobSecurity security;
  security.tls_cert_file = dir.path(name + "_cert.pem");
  security.tls_key_file = dir.path(name + "_key.pem");
  security.tls_ca_file = dir.path(name + "_ca.pem");
  return security;
}

inline std::string read_text(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace strata::testing
