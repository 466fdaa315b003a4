#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "datasets/temp_dir.h"
#include "framework/core/error.h"
#include "framework/summary/crc32c.h"
#include "framework/summary/record_reader.h"
#include "framework/summary/record_writer.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

std::vector<unsigned char> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

uint32_t le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
  return v;
}

TEST(TFRecordIO, EmptyRecordBytes) {
  const std::vector<unsigned char> expected = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                               0x29, 0x03, 0x98, 0x07, 0xd8, 0xea, 0x82, 0xa2};
  EXPECT_EQ(bytes_of(TFRecordWriter::encode("")), expected);
}

TEST(TFRecordIO, RecordLayout) {
  const std::string r = TFRecordWriter::encode("abc");
  ASSERT_EQ(r.size(), 3u + 16u);
  EXPECT_EQ(r.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));  // uint64 little-endian
  EXPECT_EQ(le32(r, 8), crc32c::mask(crc32c::value(r.substr(0, 8))));
  EXPECT_EQ(r.substr(12, 3), "abc");
  EXPECT_EQ(le32(r, 15), crc32c::mask(crc32c::value("abc")));
}

TEST(TFRecordIO, RoundTrip) {
  TempDir dir;
  const std::string path = dir.file("data.tfrecord");
  std::string big(300000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31 % 251);
  const std::vector<std::string> records = {"first", "", std::string("\0\xff\n", 3), big, "last"};
  {
    TFRecordWriter w(path);
    for (const auto& r : records) w.write(r);
    w.close();
    w.close();  // a second close does nothing
    expect_error<StateError>([&] { w.write("x"); }, {"after close", "data.tfrecord"});
  }
  TFRecordReader reader(path);
  for (const auto& r : records) {
    auto got = reader.read();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, r);
  }
  EXPECT_FALSE(reader.read().has_value());
  EXPECT_FALSE(reader.read().has_value());  // the end stays the end
  size_t total = 0;
  for (const auto& r : records) total += r.size() + 16;
  EXPECT_EQ(reader.offset(), total);
  EXPECT_EQ(TFRecordReader::read_all(path), records);
}

// What is flushed is in the file while the writer is still open: it would survive the process
// being killed at this point. What is not flushed yet is not.
TEST(TFRecordIO, FlushHandsRecordsToTheOS) {
  TempDir dir;
  const std::string path = dir.file("live.tfrecord");
  TFRecordWriter w(path);
  w.write("one");
  w.write("two");
  EXPECT_TRUE(TFRecordReader::read_all(path).empty());  // still buffered
  w.flush();
  EXPECT_EQ(TFRecordReader::read_all(path), (std::vector<std::string>{"one", "two"}));
  w.write("three");
  w.flush();
  EXPECT_EQ(TFRecordReader::read_all(path).size(), 3u);
}

TEST(TFRecordIO, CorruptionIsDetected) {
  TempDir dir;
  const std::string path = dir.file("c.tfrecord");
  {
    TFRecordWriter w(path);
    w.write("hello world");
    w.write("second");
  }
  const std::vector<unsigned char> good = read_bytes(path);

  auto with_byte_flipped = [&](size_t at) {
    auto b = good;
    b[at] ^= 0x01;
    write_bytes(path, b);
  };
  with_byte_flipped(12 + 4);  // inside the first record's data
  expect_error<ValueError>([&] { TFRecordReader::read_all(path); },
                           {"c.tfrecord", "data CRC mismatch", "byte 0"});
  with_byte_flipped(0);  // the first record's length
  expect_error<ValueError>([&] { TFRecordReader::read_all(path); }, {"length CRC mismatch"});
  with_byte_flipped(27 + 13);  // inside the second record: the first still reads
  TFRecordReader reader(path);
  EXPECT_EQ(reader.read().value(), "hello world");
  expect_error<ValueError>([&] { reader.read(); }, {"data CRC mismatch", "byte 27"});

  // A record cut short, as by a writer killed mid-write.
  write_bytes(path, std::vector<unsigned char>(good.begin(), good.end() - 3));
  expect_error<ValueError>([&] { TFRecordReader::read_all(path); }, {"truncated record", "byte 27"});
  write_bytes(path, std::vector<unsigned char>(good.begin(), good.begin() + 27 + 5));
  expect_error<ValueError>([&] { TFRecordReader::read_all(path); }, {"truncated record header"});
}

TEST(TFRecordIO, FileErrors) {
  TempDir dir;
  expect_error<IOError>([&] { TFRecordReader r(dir.file("missing.tfrecord")); },
                        {"missing.tfrecord", "cannot open"});
  expect_error<IOError>([&] { TFRecordWriter w((dir.path() / "no_such_dir" / "x").string()); },
                        {"no_such_dir", "cannot create"});
}

}  // namespace
}  // namespace strata
