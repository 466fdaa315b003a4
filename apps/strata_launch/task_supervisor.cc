#include "apps/strata_launch/task_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>

#include "framework/core/error.h"

namespace launch {
namespace {

using Clock = std::chrono::steady_clock;

// Signals reach the poll loop through this pipe (a handler may only write(2)).
int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  (void)!write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) throw strata::IOError(std::string("pipe: ") + std::strerror(errno));
}

// One output stream of one task, cut into lines that are written out with the task's prefix.
struct Stream {
  int fd = -1;
  FILE* out = nullptr;
  std::string pending;

  void emit(const std::string& prefix, const std::string& line) const {
    const std::string text = prefix + line + "\n";
    std::fwrite(text.data(), 1, text.size(), out);
    std::fflush(out);
  }
  // Reads what is there; false at end of file.
  bool drain(const std::string& prefix) {
    char buf[65536];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n > 0) {
        pending.append(buf, size_t(n));
        size_t start = 0;
        for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
          emit(prefix, pending.substr(start, nl - start));
        }
        pending.erase(0, start);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      // End of file (or a read error: nothing more will come either way).
      finish(prefix);
      return false;
    }
  }
  // Reads what is there, then closes (a partial last line is written out too).
  void drain_and_close(const std::string& prefix) {
    if (drain(prefix)) finish(prefix);
  }
  // Writes out a partial last line and closes the pipe.
  void finish(const std::string& prefix) {
    if (!pending.empty()) emit(prefix, pending);
    pending.clear();
    close(fd);
    fd = -1;
  }
};

struct Task {
  const TaskPlan* plan = nullptr;
  pid_t pid = -1;
  bool running = false;
  Stream out, err;
  std::string prefix() const { return "[" + plan->label() + "] "; }
};

void note(const std::string& line) {
  std::fprintf(stderr, "[strata-launch] %s\n", line.c_str());
  std::fflush(stderr);
}

// fork + exec of `program` with TF_CONFIG (and `environment`) set, its output into two pipes;
// the child has its own process group (a terminal's Ctrl-C reaches only the launcher, which
// forwards it once) and dies with the launcher.
void start(Task& task, const std::vector<std::string>& program,
           const std::vector<std::pair<std::string, std::string>>& environment) {
  int out[2], err[2];
  make_pipe(out);
  make_pipe(err);
  std::vector<char*> argv;
  for (const std::string& a : program) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw strata::IOError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the launcher died before prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : kForwarded) signal(sig, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    setenv("TF_CONFIG", task.plan->tf_config.c_str(), 1);
    for (const auto& [name, value] : environment) {
      if (value.empty()) {
        unsetenv(name.c_str());
      } else {
        setenv(name.c_str(), value.c_str(), 1);
      }
    }
    execvp(argv[0], argv.data());
    const std::string msg = std::string("cannot run ") + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  task.pid = pid;
  task.running = true;
  task.out = Stream{out[0], stdout, ""};
  task.err = Stream{err[0], stderr, ""};
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

// "exited with status 3", "was killed by signal 9 (SIGKILL)".
std::string describe(int status) {
  if (status <= 128) return "exited with status " + std::to_string(status);
  const char* abbrev = sigabbrev_np(status - 128);
  return "was killed by signal " + std::to_string(status - 128) + " (" +
         (abbrev ? "SIG" + std::string(abbrev) : std::string(strsignal(status - 128))) + ")";
}

}  // namespace

int supervise(const std::vector<TaskPlan>& plans, const std::vector<std::string>& program,
              const SuperviseOptions& options) {
  make_pipe(g_signal_pipe);
  fcntl(g_signal_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(g_signal_pipe[1], F_SETFL, O_NONBLOCK);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
  sigaction(SIGCHLD, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed stdout is an error to report, not a death

  std::vector<Task> tasks(plans.size());
  for (size_t i = 0; i < plans.size(); ++i) tasks[i].plan = &plans[i];
  std::optional<int> result;              // what the launcher will return, once decided
  std::optional<Clock::time_point> kill_at;  // stopping: SIGKILL whoever is left then
  bool servers_stopped = false;

  const auto signal_all = [&](int sig) {
    for (Task& t : tasks) {
      if (t.running) kill(t.pid, sig);
    }
  };
  // Sends `sig` to every task and, the first time, starts the grace period before SIGKILL.
  const auto stop_all = [&](int sig = SIGTERM) {
    signal_all(sig);
    if (!kill_at) {
      kill_at = Clock::now() + std::chrono::milliseconds(int64_t(options.grace_seconds * 1000));
    }
  };

  // A failed task: a worker is restarted while restarts are left, or, in an elastic job, let
  // go while enough training tasks run; any other failure stops the job with its status.
  const TaskPlan* leader = nullptr;  // hosts the coordination service: the chief, else worker 0
  for (const TaskPlan& p : plans) {
    if (!leader && !p.serves) leader = &p;
  }
  int restarts = 0;
  const auto fail_job = [&](int status, const std::string& why) {
    result = status;
    note(why + "; stopping the other tasks");
    stop_all();
  };
  const auto on_failure = [&](Task& t, int status) {
    const std::string ended = t.plan->label() + " " + describe(status);
    if (t.plan->type != "worker" || t.plan == leader) return fail_job(status, ended);
    const int min = options.elastic_min_workers;
    int running = 0;
    for (const Task& u : tasks) running += u.running && !u.plan->serves;
    if (min > 0 && running < min) {
      return fail_job(status, ended + "; " + std::to_string(running) +
                                  " training tasks still run, fewer than --elastic_min_workers " +
                                  std::to_string(min));
    }
    if (restarts < options.max_restarts) {
      ++restarts;
      note(ended + "; restarting it (restart " + std::to_string(restarts) + " of " +
           std::to_string(options.max_restarts) + ")");
      // What the failed run wrote comes out first, under the same prefix as the new run's.
      for (Stream* s : {&t.out, &t.err}) {
        if (s->fd >= 0) s->drain_and_close(t.prefix());
      }
      try {
        start(t, program, options.environment);
      } catch (const strata::IOError& e) {
        fail_job(status, "cannot restart " + t.plan->label() + ": " + e.what());
      }
      return;
    }
    const std::string used_up =
        options.max_restarts > 0 ? "; the job's restarts are used up (" + std::to_string(restarts) +
                                       " of --max_restarts " +
                                       std::to_string(options.max_restarts) + ")"
                                 : "";
    if (min == 0) return fail_job(status, ended + used_up);
    note(ended + used_up + "; the job goes on without it: " + std::to_string(running) +
         " training tasks still run, at least --elastic_min_workers " + std::to_string(min));
  };

  try {
    for (Task& t : tasks) start(t, program, options.environment);
  } catch (...) {
    stop_all();
    for (Task& t : tasks) {
      if (t.running) waitpid(t.pid, nullptr, 0);
    }
    throw;
  }

  for (;;) {
    // Reap.
    for (;;) {
      int ws = 0;
      const pid_t pid = waitpid(-1, &ws, WNOHANG);
      if (pid <= 0) break;
      for (Task& t : tasks) {
        if (t.pid != pid || !t.running) continue;
        t.running = false;
        const int status = shell_status(ws);
        // Once the job is stopping, a failure is the stop's doing: nothing restarts.
        if (status != 0 && !result && !kill_at) on_failure(t, status);
      }
    }
    // Training done: stop the servers.
    bool training_running = false, any_running = false;
    for (const Task& t : tasks) {
      training_running = training_running || (t.running && !t.plan->serves);
      any_running = any_running || t.running;
    }
    if (!training_running && any_running && !servers_stopped && !kill_at) {
      servers_stopped = true;
      note("the training tasks have finished; stopping the ps and evaluator tasks");
      stop_all();
    }
    bool streams_open = false;
    for (const Task& t : tasks) streams_open = streams_open || t.out.fd >= 0 || t.err.fd >= 0;
    if (!any_running && !streams_open) break;
    if (kill_at && any_running && Clock::now() >= *kill_at) {
      note("tasks still running " + std::to_string(options.grace_seconds) +
           " s after SIGTERM; sending SIGKILL");
      signal_all(SIGKILL);
      kill_at = Clock::now() + std::chrono::hours(24);  // once
    }

    std::vector<pollfd> fds{{g_signal_pipe[0], POLLIN, 0}};
    std::vector<Stream*> streams{nullptr};
    for (Task& t : tasks) {
      for (Stream* s : {&t.out, &t.err}) {
        if (s->fd < 0) continue;
        fds.push_back({s->fd, POLLIN, 0});
        streams.push_back(s);
      }
    }
    // A bounded wait: the kill deadline and children that exit with their pipes still held
    // open by a grandchild are noticed without any output arriving.
    if (poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) {
      throw strata::IOError(std::string("poll: ") + std::strerror(errno));
    }
    if (fds[0].revents & POLLIN) {
      unsigned char sig = 0;
      while (read(g_signal_pipe[0], &sig, 1) == 1) {
        if (sig == SIGCHLD) continue;
        note(std::string("received ") + strsignal(sig) + "; passing it to every task");
        if (!result) result = 128 + sig;
        stop_all(sig);
      }
    }
    for (size_t k = 1; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      for (Task& t : tasks) {
        if (streams[k] == &t.out || streams[k] == &t.err) streams[k]->drain(t.prefix());
      }
    }
    // Once no task runs, what their pipes hold is read and the pipes closed, even where a
    // grandchild still holds one open.
    if (!any_running) {
      for (Task& t : tasks) {
        for (Stream* s : {&t.out, &t.err}) {
          if (s->fd >= 0) s->drain_and_close(t.prefix());
        }
      }
    }
  }
  return result.value_or(0);
}

}  // namespace launch
