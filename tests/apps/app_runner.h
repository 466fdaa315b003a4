// Runs the apps' binaries as a user would (a child process, its own environment), for tests of
// what they print and how they exit.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace strata::apps_testing {

// How a child ended: exit_code for a normal exit (-1 otherwise), signal when killed (0
// otherwise); output: stdout and stderr together.
struct AppResult {
  int exit_code = -1;
  int signal = 0;
  std::string output;
};

// Starts `args` (args[0]: the binary) with `env` ("NAME=value") added to this process's
// environment, stdout and stderr into `output_path`. The child runs with one intra-op thread
// and passive OpenMP waits, as ctest's parallel tests should.
pid_t start_app(const std::vector<std::string>& args, const std::string& output_path,
                const std::vector<std::string>& env = {});
// Waits for a child of start_app and reads its output file.
AppResult wait_app(pid_t pid, const std::string& output_path);
// start_app + wait_app, the output in a temporary file.
AppResult run_app(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// The contents of a file ("" if unreadable).
std::string read_text(const std::string& path);

}  // namespace strata::apps_testing
