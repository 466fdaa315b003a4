#include "framework/summary/record_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <zlib.h>

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

TFRecordCompression tfrecord_compression_from_name(const std::string& name) {
  if (name.empty() || name == "NONE") return TFRecordCompression::kNone;
  if (name == "GZIP") return TFRecordCompression::kGzip;
  if (name == "ZLIB") return TFRecordCompression::kZlib;
  throw ValueError("TFRecord compression: unknown compression type '" + name +
                   "'; expected \"\" (none), \"GZIP\" or \"ZLIB\" (upper case, as TensorFlow)");
}

const char* tfrecord_compression_name(TFRecordCompression compression) {
  switch (compression) {
    case TFRecordCompression::kGzip: return "GZIP";
    case TFRecordCompression::kZlib: return "ZLIB";
    case TFRecordCompression::kNone: break;
  }
  return "";
}

// The deflate stream of a compressed file: framed records go in, compressed bytes are appended
// to the writer's buffer. windowBits 15 is zlib's default (and TensorFlow's); +16 asks zlib for
// a gzip header and trailer instead of the zlib ones.
class TFRecordWriter::Deflater {
 public:
  Deflater(TFRecordCompression compression, const std::string& path) {
    const int window_bits = compression == TFRecordCompression::kGzip ? 15 + 16 : 15;
    if (deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
      throw ResourceExhaustedError("TFRecordWriter: cannot start compressing '" + path +
                                   "': zlib could not allocate its state");
    }
  }
  ~Deflater() { deflateEnd(&z_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  // Compresses `in` into `out`; flush is Z_NO_FLUSH, Z_SYNC_FLUSH or Z_FINISH.
  void run(std::string_view in, int flush, std::string& out) {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());  // records are fed in pieces below 4 GiB
    unsigned char chunk[16384];
    for (;;) {
      z_.next_out = chunk;
      z_.avail_out = sizeof chunk;
      const int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) throw InternalError("TFRecordWriter: deflate stream error");
      out.append(reinterpret_cast<const char*>(chunk), sizeof chunk - z_.avail_out);
      // Done when zlib took all the input and had room to spare (or ended the stream).
      if (rc == Z_STREAM_END || (z_.avail_in == 0 && z_.avail_out != 0)) break;
    }
  }

 private:
  z_stream z_{};
};

std::string TFRecordWriter::encode(std::string_view data) {
  std::string out;
  out.reserve(kHeaderSize + data.size() + kFooterSize);
  put_le(out, data.size(), 8);
  put_le(out, crc32c::mask(crc32c::value(std::string_view(out).substr(0, 8))), 4);
  out.append(data);
  put_le(out, crc32c::mask(crc32c::value(data)), 4);
  return out;
}

TFRecordWriter::TFRecordWriter(std::string path)
    : TFRecordWriter(std::move(path), TFRecordCompression::kNone) {}

TFRecordWriter::TFRecordWriter(std::string path, const std::string& compression)
    : TFRecordWriter(std::move(path), tfrecord_compression_from_name(compression)) {}

TFRecordWriter::TFRecordWriter(std::string path, TFRecordCompression compression)
    : path_(std::move(path)) {
  if (compression != TFRecordCompression::kNone) {
    deflater_ = std::make_unique<Deflater>(compression, path_);
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw IOError("TFRecordWriter: cannot create '" + path_ + "': " + os_error() +
                  "; check that its directory exists and is writable");
  }
}

TFRecordWriter::~TFRecordWriter() {
  // (Deflater is complete here, so unique_ptr can delete it.)
  try {
    close();
  } catch (const Error&) {
    // A destructor must not throw; callers who care call close() themselves.
  }
}

void TFRecordWriter::write(std::string_view data) {
  if (closed()) throw StateError("TFRecordWriter: write to '" + path_ + "' after close()");
  append(encode(data));
  if (buffer_.size() >= kMaxBuffered) drain();
}

void TFRecordWriter::append(std::string_view framed) {
  if (!deflater_) {
    buffer_ += framed;
    return;
  }
  constexpr size_t kPiece = size_t{1} << 30;  // z_stream counts in 32 bits
  for (size_t at = 0; at < framed.size(); at += kPiece) {
    deflater_->run(framed.substr(at, kPiece), Z_NO_FLUSH, buffer_);
  }
}

void TFRecordWriter::flush() {
  if (closed()) return;
  // Ends the current deflate block so that everything written so far can be decompressed.
  if (deflater_) deflater_->run({}, Z_SYNC_FLUSH, buffer_);
  drain();
}

void TFRecordWriter::drain() {
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
    if (deflater_) {
      deflater_->run({}, Z_FINISH, buffer_);  // the stream's trailer (gzip: CRC32 and size)
      deflater_.reset();
    }
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
