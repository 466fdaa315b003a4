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
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace strata {

class TFRecordWriter {
 public:
  // Creates `path` (or empties it); IOError naming the path when that fails.
  explicit TFRecordWriter(std::string path);
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
  std::string buffer_;  // framed records not yet handed to the OS
};

}  // namespace strata
