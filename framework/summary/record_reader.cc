#include "framework/summary/record_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "framework/core/error.h"
#include "framework/summary/crc32c.h"
#include "framework/summary/record_writer.h"

namespace strata {
namespace {

uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

bool length_crc_ok(const char* header) {
  return crc32c::mask(crc32c::value(std::string_view(header, 8))) == get_le(header + 8, 4);
}

bool data_crc_ok(const std::string& data, const char* footer) {
  return crc32c::mask(crc32c::value(data)) == get_le(footer, 4);
}

}  // namespace

TFRecordOptions& TFRecordOptions::buffer_size(int64_t bytes) {
  if (bytes < 0) {
    throw ValueError("TFRecordOptions: buffer_size must be >= 0 (0 = the default, 256 KiB), got " +
                     std::to_string(bytes));
  }
  buffer_size_ = bytes == 0 ? 256 * 1024 : bytes;
  return *this;
}

// The inflate stream of a compressed file: reads the file a buffer at a time and hands out the
// decompressed bytes. windowBits 15 + 32 would guess the format from the header; the format is
// given instead (15 + 16: gzip only, 15: zlib only) so a ZLIB file read as GZIP is an error, as
// in TensorFlow. Several gzip members one after another (`cat a.gz b.gz`) are one stream.
class TFRecordReader::Inflater {
 public:
  Inflater(std::ifstream& in, TFRecordCompression compression, size_t buffer_size)
      : in_(in), gzip_(compression == TFRecordCompression::kGzip), input_(buffer_size) {
    if (inflateInit2(&z_, gzip_ ? 15 + 16 : 15) != Z_OK) {
      throw ResourceExhaustedError("TFRecordReader: zlib could not allocate its state");
    }
  }
  ~Inflater() { inflateEnd(&z_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Fills dst with up to n decompressed bytes; fewer only at the end of the stream. Throws
  // (via `fail`, with a reason) when the stream is broken or cut short.
  template <typename Fail>
  size_t read(char* dst, size_t n, Fail&& fail) {
    size_t done = 0;
    while (done < n) {
      if (ended_ && !refill_after_end(fail)) break;
      if (z_.avail_in == 0) refill();  // may find the end of the file: zlib may still hold output
      z_.next_out = reinterpret_cast<Bytef*>(dst + done);
      z_.avail_out = static_cast<uInt>(std::min<size_t>(n - done, 1u << 30));
      const uInt before = z_.avail_out;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      const uInt produced = before - z_.avail_out;
      done += produced;
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail("broken " + std::string(gzip_ ? "GZIP" : "ZLIB") + " stream (" +
             (z_.msg ? z_.msg : "zlib error " + std::to_string(rc)) +
             "; is the compression type right?)");
      } else if (produced == 0 && z_.avail_in == 0 && eof_) {
        fail("the " + std::string(gzip_ ? "GZIP" : "ZLIB") +
             " stream is cut short (truncated file, or not compressed as the reader was told)");
      }
    }
    return done;
  }

 private:
  bool refill() {
    if (eof_) return false;
    in_.read(input_.data(), static_cast<std::streamsize>(input_.size()));
    const auto got = static_cast<size_t>(in_.gcount());
    if (got < input_.size()) eof_ = true;
    z_.next_in = reinterpret_cast<Bytef*>(input_.data());
    z_.avail_in = static_cast<uInt>(got);
    return got > 0;
  }

  // After a stream's end: false at the end of the file; another gzip member starts a new stream;
  // anything else is an error.
  template <typename Fail>
  bool refill_after_end(Fail&& fail) {
    if (z_.avail_in == 0 && !refill()) return false;
    if (!gzip_) fail("bytes after the end of the ZLIB stream");
    inflateReset(&z_);
    ended_ = false;
    return true;
  }

  std::ifstream& in_;
  bool gzip_;
  std::vector<char> input_;
  z_stream z_{};
  bool ended_ = false;
  bool eof_ = false;  // the file has no more bytes
};

TFRecordReader::TFRecordReader(std::string path, TFRecordOptions options)
    : path_(std::move(path)), options_(options) {
  in_.open(path_, std::ios::binary);
  if (!in_) {
    throw IOError("TFRecordReader: cannot open '" + path_ + "': " + std::strerror(errno) +
                  "; check the path");
  }
  if (options_.compression() != TFRecordCompression::kNone) {
    inflater_ = std::make_unique<Inflater>(in_, options_.compression(),
                                           static_cast<size_t>(options_.buffer_size()));
  }
}

TFRecordReader::~TFRecordReader() = default;

void TFRecordReader::corrupt(const std::string& what) {
  if (options_.skip_corrupt()) {
    ++corrupt_records_;
    return;
  }
  const char* kind = tfrecord_compression_name(options_.compression());
  throw ValueError("TFRecordReader: '" + path_ + "'" +
                   (*kind ? std::string(" (") + kind + ")" : std::string()) +
                   " is corrupt at the record at byte " + std::to_string(offset_) +
                   (inflater_ ? " of the decompressed stream" : "") + ": " + what +
                   "; pass TFRecordOptions().skip_corrupt(true) to skip corrupt records");
}

std::optional<std::string> TFRecordReader::give_up(const std::string& what) {
  corrupt(what);
  done_ = true;
  return std::nullopt;
}

std::optional<std::string> TFRecordReader::read() {
  if (done_) return std::nullopt;
  return inflater_ ? read_compressed() : read_plain();
}

std::optional<std::string> TFRecordReader::read_plain() {
  for (;;) {
    // Start each read from the end of the last good record: the end of a file still being
    // written is not sticky, and a record that was cut short can be read once its writer has
    // finished it.
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset_));
    char header[TFRecordWriter::kHeaderSize];
    in_.read(header, sizeof header);
    const auto got = static_cast<size_t>(in_.gcount());
    if (got == 0) return std::nullopt;  // clean end of file
    if (got < sizeof header) {
      return give_up("truncated record header (" + std::to_string(got) + " of 12 bytes)");
    }
    if (!length_crc_ok(header)) return give_up("length CRC mismatch");
    const uint64_t length = get_le(header, 8);

    // The length is checked against what the file holds before allocating, so a damaged length
    // that passed its CRC by chance cannot ask for an absurd amount of memory.
    const std::streampos here = in_.tellg();
    in_.seekg(0, std::ios::end);
    const auto remaining = static_cast<uint64_t>(in_.tellg() - here);
    in_.seekg(here);
    if (length > remaining || remaining - length < TFRecordWriter::kFooterSize) {
      return give_up("truncated record (" + std::to_string(length) + " data bytes announced, " +
                     std::to_string(remaining) + " bytes left)");
    }
    if (length > options_.max_record_bytes()) {
      return give_up("record of " + std::to_string(length) + " bytes is above max_record_bytes (" +
                     std::to_string(options_.max_record_bytes()) + ")");
    }
    std::string data(length, '\0');
    char footer[TFRecordWriter::kFooterSize];
    in_.read(data.data(), static_cast<std::streamsize>(length));
    in_.read(footer, sizeof footer);
    if (!in_) return give_up("read failed");
    const bool ok = data_crc_ok(data, footer);
    if (!ok) corrupt("data CRC mismatch");  // returns only when skipping
    offset_ += TFRecordWriter::kHeaderSize + length + TFRecordWriter::kFooterSize;
    if (ok) return data;
  }
}

std::optional<std::string> TFRecordReader::read_compressed() {
  // A broken stream is fatal for the rest of the file: zlib cannot resynchronise.
  struct Broken {
    std::string what;
  };
  auto fail = [](std::string what) { throw Broken{std::move(what)}; };
  try {
    for (;;) {
      char header[TFRecordWriter::kHeaderSize];
      const size_t got = inflater_->read(header, sizeof header, fail);
      if (got == 0) return std::nullopt;  // clean end of the stream
      if (got < sizeof header) {
        return give_up("truncated record header (" + std::to_string(got) + " of 12 bytes)");
      }
      if (!length_crc_ok(header)) return give_up("length CRC mismatch");
      const uint64_t length = get_le(header, 8);
      if (length > options_.max_record_bytes()) {
        return give_up("record of " + std::to_string(length) +
                       " bytes is above max_record_bytes (" +
                       std::to_string(options_.max_record_bytes()) + ")");
      }
      // The decompressed size is unknown up front: the buffer grows with the bytes that really
      // arrive, so a damaged length cannot allocate more than the stream holds.
      std::string data;
      constexpr size_t kChunk = size_t{1} << 20;
      while (data.size() < length) {
        const size_t old = data.size();
        const size_t want = static_cast<size_t>(std::min<uint64_t>(length - old, kChunk));
        data.resize(old + want);
        const size_t n = inflater_->read(data.data() + old, want, fail);
        if (n < want) {
          return give_up("truncated record (" + std::to_string(length) +
                         " data bytes announced, " + std::to_string(old + n) + " present)");
        }
      }
      char footer[TFRecordWriter::kFooterSize];
      if (inflater_->read(footer, sizeof footer, fail) < sizeof footer) {
        return give_up("truncated record (its data CRC is missing)");
      }
      const bool ok = data_crc_ok(data, footer);
      if (!ok) corrupt("data CRC mismatch");  // returns only when skipping
      offset_ += TFRecordWriter::kHeaderSize + length + TFRecordWriter::kFooterSize;
      if (ok) return data;
    }
  } catch (const Broken& broken) {
    return give_up(broken.what);
  }
}

std::vector<std::string> TFRecordReader::read_all(const std::string& path,
                                                  TFRecordOptions options) {
  TFRecordReader reader(path, options);
  std::vector<std::string> records;
  while (auto r = reader.read()) records.push_back(std::move(*r));
  return records;
}

}  // namespace strata
