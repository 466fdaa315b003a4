// TFRecordWriter: writes TFRecord files (tf.io.TFRecordWriter), the framing of TensorBoard event
// files. Each record is
//   uint64 length (little-endian) | uint32 masked CRC32C of those 8 bytes |
//   data[length]                  | uint32 masked CRC32C of the data
//
//   TFRecordWriter w("/tmp/data.tfrecord");
//   w.write("bytes");  w.flush();  w.close();
//
// write() buffers; flush() hands every buffered record to the operating system, so they survive
// the process being killed (not a power cut: there is no fsync). Records are appended whole, so
// a reader sees at most a truncated last record if the process dies inside a write.
// Not thread-safe: one writer per thread, or lock around it.
//
// Compression (tf.io.TFRecordOptions' compression_type): "GZIP" makes the whole file one gzip
// stream, "ZLIB" one zlib stream, of the same framed records; "" writes them as they are.
//   TFRecordWriter w("/tmp/data.tfrecord.gz", "GZIP");
// A compressed file is complete only after close(): flush() ends a deflate block (Z_SYNC_FLUSH)
// so a reader sees every flushed record, but the stream's trailer is written by close().
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace strata {

// How a TFRecord file is compressed, as a whole (TensorFlow's compression_type).
enum class TFRecordCompression { kNone, kGzip, kZlib };

// "" (or "NONE") / "GZIP" / "ZLIB" as TensorFlow spells them; ValueError on anything else.
TFRecordCompression tfrecord_compression_from_name(const std::string& name);
const char* tfrecord_compression_name(TFRecordCompression compression);  // "", "GZIP", "ZLIB"

class TFRecordWriter {
 public:
  // Creates `path` (or empties it); IOError naming the path when that fails.
  explicit TFRecordWriter(std::string path);
  // Same, compressed as `compression` says ("", "GZIP" or "ZLIB"; ValueError otherwise).
  TFRecordWriter(std::string path, const std::string& compression);
  TFRecordWriter(std::string path, TFRecordCompression compression);
  // Closes the file; errors are dropped here (call close() to see them).
  ~TFRecordWriter();
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;

  // Appends one record (buffered). StateError after close().
  void write(std::string_view data);
  // Writes the buffered records to the file. IOError when the write fails (disk full, ...).
  void flush();
  // Flushes and closes; later calls do nothing.
  void close();
  bool closed() const { return fd_ < 0; }
  const std::string& path() const { return path_; }

  // The framed bytes of one record: header, data and footer as written to the file.
  static std::string encode(std::string_view data);
  // Bytes of framing around each record: 8 (length) + 4 (its CRC) + 4 (data CRC).
  static constexpr size_t kHeaderSize = 12;
  static constexpr size_t kFooterSize = 4;

 private:
  std::string path_;
  int fd_ = -1;
  class Deflater;  // zlib state of a compressed file (record_writer.cc)

  void append(std::string_view framed);
  void drain();  // writes buffer_ to the file

  std::string buffer_;  // file bytes (compressed when compressing) not yet handed to the OS
  std::unique_ptr<Deflater> deflater_;  // null for an uncompressed file
};

}  // namespace strata
