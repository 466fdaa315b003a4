#include "framework/summary/record_reader.h"

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

}  // namespace

TFRecordReader::TFRecordReader(std::string path) : path_(std::move(path)) {
  in_.open(path_, std::ios::binary);
  if (!in_) {
    throw IOError("TFRecordReader: cannot open '" + path_ + "': " + std::strerror(errno) +
                  "; check the path");
  }
}

void TFRecordReader::corrupt(const std::string& what) const {
  throw ValueError("TFRecordReader: '" + path_ + "' is corrupt at byte " +
                   std::to_string(offset_) + ": " + what);
}

std::optional<std::string> TFRecordReader::read() {
  // Start each read from the end of the last good record: the end of a file still being written
  // is not sticky, and a record that was cut short can be read once its writer has finished it.
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset_));
  char header[TFRecordWriter::kHeaderSize];
  in_.read(header, sizeof header);
  const auto got = static_cast<size_t>(in_.gcount());
  if (got == 0) return std::nullopt;  // clean end of file
  if (got < sizeof header) corrupt("truncated record header (" + std::to_string(got) + " of 12 bytes)");
  if (crc32c::mask(crc32c::value(std::string_view(header, 8))) != get_le(header + 8, 4)) {
    corrupt("length CRC mismatch");
  }
  const uint64_t length = get_le(header, 8);

  // The length is checked against what the file holds before allocating, so a damaged length
  // that passed its CRC by chance cannot ask for an absurd amount of memory.
  const std::streampos here = in_.tellg();
  in_.seekg(0, std::ios::end);
  const auto remaining = static_cast<uint64_t>(in_.tellg() - here);
  in_.seekg(here);
  if (length > remaining || remaining - length < TFRecordWriter::kFooterSize) {
    corrupt("truncated record (" + std::to_string(length) + " data bytes announced, " +
            std::to_string(remaining) + " bytes left)");
  }
  std::string data(length, '\0');
  char footer[TFRecordWriter::kFooterSize];
  in_.read(data.data(), static_cast<std::streamsize>(length));
  in_.read(footer, sizeof footer);
  if (!in_) corrupt("read failed");
  if (crc32c::mask(crc32c::value(data)) != get_le(footer, 4)) corrupt("data CRC mismatch");
  offset_ += TFRecordWriter::kHeaderSize + length + TFRecordWriter::kFooterSize;
  return data;
}

std::vector<std::string> TFRecordReader::read_all(const std::string& path) {
  TFRecordReader reader(path);
  std::vector<std::string> records;
  while (auto r = reader.read()) records.push_back(std::move(*r));
  return records;
}

}  // namespace strata
