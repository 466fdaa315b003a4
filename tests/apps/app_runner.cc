#include "tests/apps/app_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace strata::apps_testing {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

pid_t start_app(const std::vector<std::string>& args, const std::string& output_path,
                const std::vector<std::string>& env) {
  std::vector<std::string> environment{"STRATA_NUM_THREADS=1", "OMP_WAIT_POLICY=PASSIVE"};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "STRATA_NUM_THREADS=", 19) != 0 &&
        std::strncmp(*e, "STRATA_TEST_KILL_AT=", 20) != 0) {
      environment.emplace_back(*e);
    }
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));
  return pid;
}

AppResult wait_app(pid_t pid, const std::string& output_path) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  AppResult r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.output = read_text(output_path);
  return r;
}

AppResult run_app(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  static std::atomic<int> counter{0};
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("strata_app_output_" + std::to_string(::getpid()) + "_" +
                             std::to_string(counter++) + ".txt"))
                               .string();
  const AppResult r = wait_app(start_app(args, path, env), path);
  std::filesystem::remove(path);
  return r;
}

}  // namespace strata::apps_testing
