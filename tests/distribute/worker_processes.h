// Test-only: the processes of a multi-worker job on this machine. Each worker is this test binary
// started again (posix_spawn, not fork: this process is multi-threaded) running one child test
// that does its work only when the scenario variable is set, with TF_CONFIG naming its task in a
// cluster of free loopback ports. Every wait is bounded; a test's destructor kills what is left.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/framework/saving/child_process_util.h"

namespace strata::testing {

// `n` distinct loopback ports nobody listens on now (the kernel's choice for port 0): all bound
// at once, then released; asked for one at a time, the kernel can answer the same port twice, and
// a job's tasks each need their own.
inline std::vector<int> free_ports(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    if (fd >= 0) fds.push_back(fd);
    ports.push_back(port);
  }
  for (int fd : fds) close(fd);
  return ports;
}

// TF_CONFIG for `workers` workers on distinct free loopback ports, one string per task.
inline std::vector<std::string> tf_configs(int workers) {
  std::string list;
  const std::vector<int> ports = free_ports(workers);
  for (int w = 0; w < workers; ++w) {
    list += std::string(w ? ", " : "") + "\"localhost:" + std::to_string(ports[size_t(w)]) + "\"";
  }
  std::vector<std::string> out;
  for (int w = 0; w < workers; ++w) {
    out.push_back("{\"cluster\": {\"worker\": [" + list + "]}, \"task\": {\"type\": \"worker\", "
                  "\"index\": " + std::to_string(w) + "}}");
  }
  return out;
}

inline std::string read_file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct ChildExit {
  bool exited = false;   // false: killed by a signal, or still running at the deadline
  int code = -1;
  int signal = 0;
  double seconds = 0;    // from wait_child's call to the end
};

// Polls `done` every 10 ms until it holds or `seconds` pass; whether it held. For waits on
// other processes' progress (files they write), bounded so a test never hangs.
inline bool wait_until(const std::function<bool()>& done, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(int64_t(seconds * 1000));
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A fixture with a fresh folder per test for the workers' outputs (out(w)) and logs (log(w)).
class WorkerJobTest : public ::testing::Test {
 protected:
  explicit WorkerJobTest(std::string tag) : tag_(std::move(tag)) {}
  void SetUp() override {
    dir_ = ::testing::TempDir() + tag_ + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
           std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string out(int w) const { return dir_ + "/out_" + std::to_string(w); }
  std::string log(int w) const { return dir_ + "/log_" + std::to_string(w); }

  std::string tag_;
  std::string dir_;
};

class WorkerProcesses {
 public:
  ~WorkerProcesses() {
    for (pid_t p : pids_) {
      if (p > 0) {
        ::kill(p, SIGKILL);
        waitpid(p, nullptr, 0);
      }
    }
  }

  // Starts `test` with `env` (NAME=value, ahead of this environment) and its output in `log`;
  // returns the worker's slot.
  int start(const std::string& test, std::vector<std::string> env, const std::string& log) {
    env.push_back("OMP_WAIT_POLICY=PASSIVE");
    env.push_back("STRATA_NUM_THREADS=1");
    pids_.push_back(spawn_test_in_child(test, std::move(env), log));
    logs_.push_back(log);
    return int(pids_.size()) - 1;
  }

  void kill(int slot, int sig = SIGKILL) {
    if (pids_[size_t(slot)] > 0) ::kill(pids_[size_t(slot)], sig);
  }

  // Waits up to `timeout_s` for the worker; kills it (and reports it as not exited) after that.
  ChildExit wait(int slot, double timeout_s) {
    ChildExit out;
    const auto start = std::chrono::steady_clock::now();
    pid_t& pid = pids_[size_t(slot)];
    if (pid <= 0) return out;
    int status = 0;
    for (;;) {
      const pid_t done = waitpid(pid, &status, WNOHANG);
      out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (done == pid) break;
      if (out.seconds > timeout_s) {
        ::kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        pid = -1;
        return out;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid = -1;
    out.exited = WIFEXITED(status);
    out.code = out.exited ? WEXITSTATUS(status) : -1;
    out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return out;
  }

  std::string log(int slot) const { return read_file_text(logs_[size_t(slot)]); }

 private:
  std::vector<pid_t> pids_;
  std::vector<std::string> logs_;
};

}  // namespace strata::testing
