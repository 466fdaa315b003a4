// TFRecordReader: reads the records of a TFRecord file back (the framing is described in
// record_writer.h), checking both CRCs of every record.
//
//   TFRecordReader r(path);
//   while (auto record = r.read()) use(*record);
//
// A file that does not exist or cannot be opened is an IOError; a record whose CRC does not match
// or that is cut short (a writer killed mid-write, a file still being written) is a ValueError
// naming the file and the offset of the record.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace strata {

class TFRecordReader {
 public:
  explicit TFRecordReader(std::string path);

  // The next record's data, or nullopt at the end of the file.
  std::optional<std::string> read();
  // Byte offset of the next record.
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }

  // Every record of `path`, in order.
  static std::vector<std::string> read_all(const std::string& path);

 private:
  [[noreturn]] void corrupt(const std::string& what) const;

  std::string path_;
  std::ifstream in_;
  uint64_t offset_ = 0;
};

}  // namespace strata
