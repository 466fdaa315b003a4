#include "apps/strata_launch/job_token_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "framework/core/error.h"

namespace launch {

std::string random_bytes(size_t bytes) {
  std::string out(bytes, '\0');
  size_t filled = 0;
  while (filled < bytes) {
    const ssize_t n = getrandom(out.data() + filled, bytes - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw strata::IOError(std::string("strata-launch: cannot draw a random job token: "
                                        "getrandom: ") + std::strerror(errno));
    }
    filled += size_t(n);
  }
  return out;
}

JobTokenFile::JobTokenFile() {
  std::string pattern = (std::filesystem::temp_directory_path() / "strata-launch-XXXXXX").string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (mkdtemp(name.data()) == nullptr) {   // mode 0700
    throw strata::IOError("strata-launch: cannot make a folder for the job token (" + pattern +
                          "): " + std::strerror(errno) + "; set TMPDIR to a writable folder");
  }
  dir_ = name.data();
  path_ = dir_ + "/job_token";
  static const char* kHex = "0123456789abcdef";
  std::string text;
  for (const unsigned char byte : random_bytes(32)) {
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
  }
  text += '\n';
  const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const bool written = fd >= 0 && write(fd, text.data(), text.size()) == ssize_t(text.size());
  const int error = errno;
  if (fd >= 0) close(fd);
  if (!written) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw strata::IOError("strata-launch: cannot write the job token file " + path_ + ": " +
                          std::strerror(error));
  }
}

JobTokenFile::~JobTokenFile() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace launch
