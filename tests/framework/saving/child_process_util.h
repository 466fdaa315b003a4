// Runs one test of this binary in a child process, for checks a crash must not take the whole
// test binary down with (byte flips into libhdf5, exit after a failed write). The child is a
// fresh process started with posix_spawn, not a fork of this multi-threaded one (a fork keeps
// other threads' locks and loses the OpenMP pool), and runs only `test`, which does its work
// when `env_var` is set (and skips itself otherwise, in a normal run).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace strata::testing {

// Starts `test` ("Suite.Name") of this binary with `env_vars` (NAME=value, ahead of this
// process's own environment, so they win) added, its output in `log`; returns the child's pid,
// or -1 when it could not be started. The caller waits for it (or kills it).
inline pid_t spawn_test_in_child(const std::string& test, std::vector<std::string> env_vars,
                                 const std::string& log) {
  std::vector<char*> env;
  for (std::string& v : env_vars) env.push_back(v.data());
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(nullptr);
  std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=" + test;
  char* argv[] = {exe.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t child = 0;
  const int rc = posix_spawn(&child, exe.c_str(), &actions, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? child : -1;
}

// spawn_test_in_child, then waits; returns its wait status (-1 when it could not be started).
// A child still running after `timeout_s` seconds is killed (SIGKILL): a hang fails the test too.
inline int run_test_in_child(const std::string& test, std::vector<std::string> env_vars,
                             const std::string& log, int timeout_s = 600) {
  const pid_t child = spawn_test_in_child(test, std::move(env_vars), log);
  if (child < 0) return -1;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) return status;
    if (done < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// "exited with 0", "killed by signal 11 (Segmentation fault)".
inline std::string describe_status(int status) {
  if (status == -1) return "could not be started";
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + (WTERMSIG(status) == SIGKILL ? ": a hang, or memory" : "") +
           ")";
  }
  return "ended with status " + std::to_string(status);
}

// The last `max` bytes of a file (a child's log), for failure messages.
inline std::string tail_of(const std::string& path, size_t max = 4000) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > max ? "..." + text.substr(text.size() - max) : text;
}

}  // namespace strata::testing
