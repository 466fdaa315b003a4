#include "framework/summary/record_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "framework/core/error.h"
#include "framework/summary/crc32c.h"

namespace strata {
namespace {

// Past this much buffered data write() flushes on its own, so memory stays bounded between the
// caller's flushes.
constexpr size_t kMaxBuffered = size_t{1} << 20;

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::string os_error() { return std::strerror(errno); }

}  // namespace

std::string TFRecordWriter::encode(std::string_view data) {
  std::string out;
  out.reserve(kHeaderSize + data.size() + kFooterSize);
  put_le(out, data.size(), 8);
  put_le(out, crc32c::mask(crc32c::value(std::string_view(out).substr(0, 8))), 4);
  out.append(data);
  put_le(out, crc32c::mask(crc32c::value(data)), 4);
  return out;
}

TFRecordWriter::TFRecordWriter(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw IOError("TFRecordWriter: cannot create '" + path_ + "': " + os_error() +
                  "; check that its directory exists and is writable");
  }
}

TFRecordWriter::~TFRecordWriter() {
  try {
    close();
  } catch (const Error&) {
    // A destructor must not throw; callers who care call close() themselves.
  }
}

void TFRecordWriter::write(std::string_view data) {
  if (closed()) throw StateError("TFRecordWriter: write to '" + path_ + "' after close()");
  buffer_ += encode(data);
  if (buffer_.size() >= kMaxBuffered) flush();
}

void TFRecordWriter::flush() {
  if (closed()) return;
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string reason = os_error();
      buffer_.erase(0, done);  // keep what was not written, so a retry does not duplicate
      throw IOError("TFRecordWriter: cannot write '" + path_ + "': " + reason +
                    "; free disk space or choose another directory");
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

void TFRecordWriter::close() {
  if (closed()) return;
  try {
    flush();
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0 && errno != EINTR) {
    throw IOError("TFRecordWriter: cannot close '" + path_ + "': " + os_error());
  }
}

}  // namespace strata
