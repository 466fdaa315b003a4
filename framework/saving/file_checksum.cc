#include "framework/saving/file_checksum.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "framework/core/error.h"

namespace strata::saving {
namespace {

constexpr std::string_view kFirstLine = "strata-checksum 1\n";

// An open descriptor closed on every path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void os_failure(const std::string& what, const std::string& path) {
  const int err = errno;
  throw IOError(what + " '" + path + "': " + std::strerror(err));
}

// Reads exactly `size` bytes at `offset`; false at the end of the file.
bool read_at(int fd, char* out, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, out, size, off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = 0;
      return false;
    }
    out += n;
    offset += uint64_t(n);
    size -= size_t(n);
  }
  return true;
}

// The CRC-32 of the file's bytes from kChecksumHeaderSize to the end, and how many there are.
struct Digest {
  uint32_t crc = 0;
  uint64_t size = 0;
};

Digest digest_after_header(int fd, const std::string& what, const std::string& path) {
  std::vector<char> buffer(64 << 10);
  uLong crc = ::crc32(0L, Z_NULL, 0);
  Digest d;
  for (;;) {
    const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), off_t(kChecksumHeaderSize + d.size));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) os_failure(what, path);
    if (n == 0) break;
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), uInt(n));
    d.size += uint64_t(n);
  }
  d.crc = uint32_t(crc);
  return d;
}

std::string hex(uint32_t v) {
  char s[16];
  std::snprintf(s, sizeof(s), "%08" PRIx32, v);
  return s;
}

}  // namespace

bool has_checksum_header(std::string_view bytes) {
  return bytes.substr(0, kFirstLine.size()) == kFirstLine;
}

void write_checksum(const std::string& path) {
  const std::string what = "Saving: cannot write the checksum of";
  Fd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) os_failure(what, path);
  const Digest d = digest_after_header(fd.get(), what, path);
  std::string header = std::string(kFirstLine) + "crc32 " + hex(d.crc) + "\nsize " +
                       std::to_string(d.size) + "\n";
  header.resize(kChecksumHeaderSize, '\0');
  size_t done = 0;
  while (done < header.size()) {
    const ssize_t n = ::pwrite(fd.get(), header.data() + done, header.size() - done, off_t(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) os_failure(what, path);
    done += size_t(n);
  }
}

bool verify_checksum(const std::string& path) {
  const std::string what = "Loading: cannot read";
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) os_failure(what, path);
  std::string header(kChecksumHeaderSize, '\0');
  if (!read_at(fd.get(), header.data(), header.size(), 0)) {
    if (errno != 0) os_failure(what, path);
    return false;  // shorter than a header: not one of ours (HDF5 says what it is)
  }
  if (!has_checksum_header(header)) return false;
  const std::string damaged = "Loading: '" + path + "' is damaged: ";
  const std::string fix = "; it is not a valid HDF5/Keras file any more. Load an earlier copy "
                          "(or another backup), or save it again";
  uint32_t crc = 0;
  uint64_t size = 0;
  int consumed = 0;
  const std::string fields = header.substr(kFirstLine.size());
  if (std::sscanf(fields.c_str(), "crc32 %8" SCNx32 "\nsize %20" SCNu64 "\n%n", &crc, &size,
                  &consumed) != 2 ||
      consumed == 0 || fields.find_first_not_of('\0', size_t(consumed)) != std::string::npos) {
    throw ValueError(damaged + "its checksum header (the first " +
                     std::to_string(kChecksumHeaderSize) + " bytes) is unreadable" + fix);
  }
  const Digest d = digest_after_header(fd.get(), what, path);
  if (d.size != size) {
    throw ValueError(damaged + "its checksum header says " + std::to_string(size) +
                     " bytes follow it, the file holds " + std::to_string(d.size) + " (" +
                     (d.size < size ? "truncated" : "extended") + " after it was written)" + fix);
  }
  if (d.crc != crc) {
    throw ValueError(damaged + "its checksum does not match (CRC-32 " + hex(d.crc) +
                     ", the header says " + hex(crc) + "): bytes changed after it was written "
                     "(a disk, transfer or copy error)" + fix);
  }
  return true;
}

}  // namespace strata::saving
