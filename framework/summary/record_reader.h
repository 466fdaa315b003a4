// TFRecordReader: reads the records of a TFRecord file back (the framing is described in
// record_writer.h), checking both CRCs of every record.
//
//   TFRecordReader r(path);
//   while (auto record = r.read()) use(*record);
//
//   TFRecordReader gz(path, TFRecordOptions().compression("GZIP").skip_corrupt(true));
//
// A file that does not exist or cannot be opened is an IOError; a record whose CRC does not match
// or that is cut short (a writer killed mid-write, a file still being written), or a compressed
// stream that is broken or cut short, is a ValueError naming the file and the offset of the
// record (for a compressed file, the offset in the decompressed stream, as TensorFlow counts).
//
// skip_corrupt (tf.data.experimental.ignore_errors for one file): a record whose data CRC does
// not match is skipped and counted, and reading goes on with the next one. Damage that loses the
// framing (a bad length CRC, a truncated record, a broken compressed stream) cannot be stepped
// over: it is counted once and ends the file.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/summary/record_writer.h"

namespace strata {

// How to read TFRecord files (tf.io.TFRecordOptions plus the reader's own settings).
class TFRecordOptions {
 public:
  // "" / "GZIP" / "ZLIB" (ValueError otherwise).
  TFRecordOptions& compression(const std::string& name) {
    compression_ = tfrecord_compression_from_name(name);
    return *this;
  }
  TFRecordOptions& compression(TFRecordCompression c) {
    compression_ = c;
    return *this;
  }
  // Skip and count corrupt records instead of throwing (see above).
  TFRecordOptions& skip_corrupt(bool skip) {
    skip_corrupt_ = skip;
    return *this;
  }
  // Bytes read from the file at a time (TFRecordDataset's buffer_size); 0 = 256 KiB.
  TFRecordOptions& buffer_size(int64_t bytes);
  // A record announcing more data than this is corrupt (bounds what hostile input can make the
  // reader allocate; default 1 GiB).
  TFRecordOptions& max_record_bytes(uint64_t bytes) {
    max_record_bytes_ = bytes;
    return *this;
  }

  TFRecordCompression compression() const { return compression_; }
  bool skip_corrupt() const { return skip_corrupt_; }
  int64_t buffer_size() const { return buffer_size_; }
  uint64_t max_record_bytes() const { return max_record_bytes_; }

 private:
  TFRecordCompression compression_ = TFRecordCompression::kNone;
  bool skip_corrupt_ = false;
  int64_t buffer_size_ = 256 * 1024;
  uint64_t max_record_bytes_ = uint64_t{1} << 30;
};

class TFRecordReader {
 public:
  explicit TFRecordReader(std::string path, TFRecordOptions options = {});
  ~TFRecordReader();
  TFRecordReader(const TFRecordReader&) = delete;
  TFRecordReader& operator=(const TFRecordReader&) = delete;

  // The next record's data, or nullopt at the end of the file.
  std::optional<std::string> read();
  // Byte offset of the next record (in the decompressed stream for a compressed file).
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }
  // Records skipped as corrupt so far (always 0 without skip_corrupt).
  int64_t corrupt_records() const { return corrupt_records_; }

  // Every record of `path`, in order.
  static std::vector<std::string> read_all(const std::string& path, TFRecordOptions options = {});

 private:
  class Inflater;  // zlib state of a compressed file (record_reader.cc)

  // Throws the ValueError for damage at the current record or, with skip_corrupt, counts it
  // and returns (the caller then skips the record or gives up on the file).
  void corrupt(const std::string& what);
  std::optional<std::string> give_up(const std::string& what);  // corrupt(), then end the file
  std::optional<std::string> read_plain();
  std::optional<std::string> read_compressed();

  std::string path_;
  TFRecordOptions options_;
  std::ifstream in_;
  std::unique_ptr<Inflater> inflater_;  // null for an uncompressed file
  uint64_t offset_ = 0;
  int64_t corrupt_records_ = 0;
  bool done_ = false;  // set when skip_corrupt gives up on the rest of the file
};

}  // namespace strata
