#include "framework/saving/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "framework/core/error.h"

namespace strata::saving {
namespace {

std::string os_error(int err) { return std::strerror(err); }

std::filesystem::path directory_of(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

// Creates an empty, uniquely named file (O_EXCL) next to `path` and returns its name: unique
// across threads (counter), processes (pid) and leftovers of killed ones (O_EXCL retries).
std::string create_temporary(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const std::string prefix = temporary_prefix_for(path);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::string temp = prefix + std::to_string(::getpid()) + "-" +
                             std::to_string(counter.fetch_add(1)) + ".h5";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return temp;
    }
    if (errno != EEXIST) {
      const int err = errno;
      throw IOError("Saving: cannot create a temporary file next to '" + path + "' ('" + temp +
                    "'): " + os_error(err) + "; check that the directory exists and is writable");
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

}  // namespace

std::string temporary_prefix_for(const std::string& path) {
  const std::filesystem::path p(path);
  return (directory_of(path) / ("." + p.filename().string() + ".tmp-")).string();
}

void write_file_atomically(const std::string& path,
                           const std::function<void(const std::string& temp_path)>& write) {
  if (path.empty()) throw ValueError("Saving: the file path is empty; pass a path like 'model.h5'");
  const std::filesystem::path dir = directory_of(path);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw IOError("Saving: cannot write '" + path + "': the directory '" + dir.string() +
                  "' does not exist; create it first");
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw IOError("Saving: cannot write '" + path + "': it is a directory; pass a file path");
  }
  const std::string temp = create_temporary(path);
  try {
    write(temp);
    sync_path(temp, O_RDONLY, "the file");
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
