#include "framework/saving/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>

#include "framework/core/error.h"

namespace strata::saving {
namespace {

namespace fs = std::filesystem;

// A temporary file untouched for this long belongs to no live save, whatever its name says.
constexpr auto kAbandonedAfter = std::chrono::hours(24);

std::string os_error(int err) { return std::strerror(err); }

fs::path directory_of(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

// This machine's name, in temporary file names: a process id means something only on the host
// that issued it (a directory may be shared over NFS).
const std::string& host_name() {
  static const std::string name = [] {
    char buffer[HOST_NAME_MAX + 1] = {};
    if (::gethostname(buffer, sizeof(buffer) - 1) != 0 || buffer[0] == '\0') return std::string("host");
    std::string n(buffer);
    for (char& c : n) {
      if (c == '/' || c == '-') c = '_';  // '-' separates the name's fields
    }
    return n;
  }();
  return name;
}

// Creates an empty, uniquely named file (O_EXCL) next to `path` and returns its name: unique
// across threads (counter), processes (host and pid) and leftovers of killed ones (O_EXCL
// retries).
std::string create_temporary(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const std::string prefix = temporary_prefix_for(path) + host_name() + "-" +
                             std::to_string(::getpid()) + "-";
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::string temp = prefix + std::to_string(counter.fetch_add(1)) + ".h5";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return temp;
    }
    if (errno != EEXIST) {
      const int err = errno;
      throw IOError("Saving: cannot create a temporary file next to '" + path + "' ('" + temp +
                    "'): " + os_error(err) + "; check that the directory '" +
                    directory_of(path).string() + "' is writable and its disk has space");
    }
  }
  throw IOError("Saving: cannot find a free temporary file name next to '" + path + "'");
}

// fsync of a file or directory by name; `what` names it in the error.
void sync_path(const std::string& target, int flags, const std::string& what) {
  const int fd = ::open(target.c_str(), flags | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw IOError("Saving: cannot flush " + what + " '" + target + "' to disk: " + os_error(err));
  }
  ::close(fd);
}

// Whether the temporary file `name` (its name after the prefix: "<host>-<pid>-<n>.h5") was made
// by a process of this host that no longer runs. Names of another form say nothing.
bool owner_is_gone(const std::string& name) {
  const size_t counter_dash = name.rfind('-');
  if (counter_dash == std::string::npos || counter_dash == 0) return false;
  const size_t pid_dash = name.rfind('-', counter_dash - 1);
  if (pid_dash == std::string::npos || name.substr(0, pid_dash) != host_name()) return false;
  long pid = 0;
  const char* first = name.data() + pid_dash + 1;
  const char* last = name.data() + counter_dash;
  const auto [end, ec] = std::from_chars(first, last, pid);
  if (ec != std::errc() || end != last || pid <= 0 || pid == long(::getpid())) return false;
  return ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string temporary_prefix_for(const std::string& path) {
  std::string name = ".";  // built in steps: GCC 12 warns falsely (-Wrestrict) on "." + string
  name += fs::path(path).filename().string();
  name += ".tmp-";
  return (directory_of(path) / name).string();
}

int remove_stale_temporaries(const std::string& path) {
  const fs::path dir = directory_of(path);
  const std::string prefix = fs::path(temporary_prefix_for(path)).filename().string();
  const auto now = fs::file_time_type::clock::now();
  int removed = 0;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  // Best effort: an unreadable entry or directory leaves things as they are.
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec) || entry_ec) continue;
    const auto modified = fs::last_write_time(it->path(), entry_ec);
    const bool old = !entry_ec && now - modified > kAbandonedAfter;
    if ((old || owner_is_gone(name.substr(prefix.size()))) && fs::remove(it->path(), entry_ec)) {
      ++removed;
    }
  }
  return removed;
}

void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& temp_path)>& write,
                           const std::function<void()>& before_rename) {
  if (path.empty()) throw ValueError("Saving: the file path is empty; pass a path like 'model.h5'");
  const fs::path dir = directory_of(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    throw IOError("Saving: cannot write '" + path + "': the directory '" + dir.string() + "' " +
                  (err == ENOENT ? "does not exist; create it first"
                                 : "cannot be reached (" + os_error(err) + ")"));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw IOError("Saving: cannot write '" + path + "': '" + dir.string() +
                  "' is not a directory (it is a file); give a path inside a directory");
  }
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw IOError("Saving: cannot write '" + path + "': it is " +
                  (S_ISDIR(st.st_mode) ? "a directory; pass a file path"
                                       : "not a regular file (a device, pipe or socket); pass "
                                         "the path of a file to create or replace"));
  }
  remove_stale_temporaries(path);
  const std::string temp = create_temporary(path);
  try {
    try {
      write(temp);
    } catch (const IOError& e) {
      // The writer names the temporary file; the caller knows the target.
      std::string what = e.what();
      if (what.rfind("Saving: ", 0) == 0) what.erase(0, 8);
      throw IOError("Saving '" + path + "' (through the temporary file '" + temp + "'): " + what);
    }
    sync_path(temp, O_RDONLY, "the file");
    if (before_rename) before_rename();
    if (::rename(temp.c_str(), path.c_str()) != 0) {
      const int err = errno;
      throw IOError("Saving: cannot rename '" + temp + "' to '" + path + "': " + os_error(err));
    }
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  // The rename is atomic but only durable once the directory entry is on disk.
  sync_path(dir.string(), O_RDONLY | O_DIRECTORY, "the directory");
}

}  // namespace strata::saving
