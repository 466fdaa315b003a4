#include "apps/common/model_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "framework/core/error.h"

namespace apps {
namespace fs = std::filesystem;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

[[noreturn]] void unusable(const fs::path& dir, const std::string& problem) {
  throw strata::IOError("--model_dir " + quoted(dir) + ": " + problem +
                        "; pass a directory this user can create and write (or fix its "
                        "permissions)");
}

// Creates `path` (and parents) unless it is a directory already.
void ensure_directory(const fs::path& dir, const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) return;
  if (fs::exists(st)) {
    unusable(dir, quoted(path) + " exists and is not a directory (it is a " +
                      (fs::is_regular_file(st) ? "regular file" : "special file") + ")");
  }
  fs::create_directories(path, ec);
  if (ec) unusable(dir, "cannot create " + quoted(path) + ": " + ec.message());
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown host";
  return name;
}

}  // namespace

void prepare_model_dir(const fs::path& dir) {
  if (dir.empty()) unusable(dir, "the path is empty");
  ensure_directory(dir, dir);
  const fs::path probe = dir / (".write_test." + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    unusable(dir, std::string("the directory is not writable (creating a file there failed: ") +
                      std::strerror(errno) + ")");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void prepare_model_dir_layout(const fs::path& dir, const std::vector<std::string>& subdirs,
                              const std::vector<std::string>& files) {
  for (const std::string& sub : subdirs) ensure_directory(dir, dir / sub);
  for (const std::string& file : files) {
    std::error_code ec;
    const fs::file_status st = fs::status(dir / file, ec);
    if (fs::exists(st) && !fs::is_regular_file(st)) {
      unusable(dir, quoted(dir / file) + " exists and is not a regular file (the run writes it); "
                    "move it away");
    }
  }
}

ModelDirLock::ModelDirLock(const fs::path& dir) {
  const fs::path path = dir / kFileName;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    unusable(dir, "cannot open the lock file " + quoted(path) + ": " + std::strerror(errno));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string owner;
    if (err == EWOULDBLOCK) {
      char buf[512] = {};
      const ssize_t n = ::pread(fd_, buf, sizeof(buf) - 1, 0);
      owner = n > 0 ? std::string(buf, size_t(n)) : std::string();
      while (!owner.empty() && (owner.back() == '\n' || owner.back() == ' ')) owner.pop_back();
    }
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) {
      unusable(dir, "cannot lock " + quoted(path) + ": " + std::strerror(err));
    }
    throw strata::IOError(
        "--model_dir " + quoted(dir) + " is in use by another run (" +
        (owner.empty() ? std::string("its PID is not written yet") : owner) + " holds " +
        quoted(path) + "); two runs in one directory would share its backup and logs: wait for "
        "that run to end (or stop it), or pass another --model_dir");
  }
  // "PID 1234 on host h": what a second run's error shows.
  const std::string owner = "PID " + std::to_string(::getpid()) + " on host " + host_name() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, owner.data(), owner.size(), 0) < 0) {
    // The lock is held; only the note for others is missing.
  }
}

ModelDirLock::~ModelDirLock() {
  // Closing releases the lock. The file stays: removing it would let a run that opened it just
  // before lock a file no longer in the directory, while a third run locks a new one.
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<ModelDirLock> claim_model_dir(const fs::path& dir,
                                              const std::vector<std::string>& subdirs,
                                              const std::vector<std::string>& files) {
  prepare_model_dir(dir);
  auto lock = std::make_unique<ModelDirLock>(dir);
  prepare_model_dir_layout(dir, subdirs, files);
  return lock;
}

}  // namespace apps
