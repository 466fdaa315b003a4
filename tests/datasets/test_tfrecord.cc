// TFRecord files with and without compression: the writer and reader round trip, TensorFlow's
// exact bytes, corruption reports (file and offset), skip_corrupt, and TFRecordDataset.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "datasets/temp_dir.h"
#include "datasets/tfrecord/tfrecord_dataset.h"
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

std::string as_string(const std::vector<unsigned char>& b) { return {b.begin(), b.end()}; }

const std::vector<std::string> kRecords = {"hello", "", std::string(100000, 'x'),
                                           std::string("\0\1\2\xff", 4), "last"};

void write_file(const std::string& path, const std::string& compression,
                const std::vector<std::string>& records = kRecords) {
  TFRecordWriter w(path, compression);
  for (const std::string& r : records) w.write(r);
  w.close();
}

// Decompresses a whole gzip (windowBits 15+16) or zlib (15) file with zlib itself, independently
// of the reader.
std::string inflate_all(const std::string& in, int window_bits) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, window_bits), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[4096];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&z);
  return out;
}

TEST(TFRecordFormat, HelloRecordBytesAsTensorFlowWritesThem) {
  // Derived by hand from the spec with a bitwise CRC32C (polynomial 0x82F63B78):
  // crc32c("hello") = 0x9a71bb4c, masked = ((c >> 15) | (c << 17)) + 0xa282ead8 = 0x191c1fbb.
  const std::vector<unsigned char> expected = {
      0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // length 5, uint64 little-endian
      0xea, 0xb2, 0x04, 0x3e,                          // masked CRC32C of those 8 bytes
      'h',  'e',  'l',  'l',  'o',                     // data
      0xbb, 0x1f, 0x1c, 0x19};                         // masked CRC32C of the data
  EXPECT_EQ(TFRecordWriter::encode("hello"), as_string(expected));
  EXPECT_EQ(crc32c::mask(crc32c::value("hello")), 0x191c1fbbu);
  EXPECT_EQ(crc32c::value("hello"), 0x9a71bb4cu);

  TempDir dir;
  const std::string path = dir.file("hello.tfrecord");
  write_bytes(path, expected);  // a file as TensorFlow writes it
  EXPECT_EQ(TFRecordReader::read_all(path), std::vector<std::string>{"hello"});
}

TEST(TFRecordFormat, CompressionNames) {
  EXPECT_EQ(tfrecord_compression_from_name(""), TFRecordCompression::kNone);
  EXPECT_EQ(tfrecord_compression_from_name("GZIP"), TFRecordCompression::kGzip);
  EXPECT_EQ(tfrecord_compression_from_name("ZLIB"), TFRecordCompression::kZlib);
  expect_error<ValueError>([] { tfrecord_compression_from_name("gzip2"); }, {"gzip2", "GZIP"});
}

TEST(TFRecordFormat, RoundTripEveryCompression) {
  TempDir dir;
  for (const std::string compression : {"", "GZIP", "ZLIB"}) {
    SCOPED_TRACE(compression);
    const std::string path = dir.file("r" + compression + ".tfrecord");
    write_file(path, compression);
    EXPECT_EQ(TFRecordReader::read_all(path, TFRecordOptions().compression(compression)), kRecords);
    // A small read buffer crosses every record boundary.
    EXPECT_EQ(TFRecordReader::read_all(
                  path, TFRecordOptions().compression(compression).buffer_size(7)),
              kRecords);
  }
}

TEST(TFRecordFormat, CompressedFilesAreGzipAndZlibStreamsOfThePlainFraming) {
  TempDir dir;
  std::string plain;
  for (const std::string& r : kRecords) plain += TFRecordWriter::encode(r);
  write_file(dir.file("a.gz"), "GZIP");
  write_file(dir.file("a.z"), "ZLIB");
  const std::string gz = as_string(read_bytes(dir.file("a.gz")));
  const std::string zl = as_string(read_bytes(dir.file("a.z")));
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_EQ(inflate_all(gz, 15 + 16), plain);
  EXPECT_EQ(inflate_all(zl, 15), plain);
  EXPECT_LT(gz.size(), plain.size() / 10);  // the 100000 'x' compress
}

TEST(TFRecordFormat, FlushedCompressedRecordsAreReadable) {
  TempDir dir;
  const std::string path = dir.file("f.gz");
  TFRecordWriter w(path, "GZIP");
  w.write("one");
  w.flush();  // no trailer yet: the stream is cut short after the record
  TFRecordReader r(path, TFRecordOptions().compression("GZIP"));
  EXPECT_EQ(r.read().value(), "one");
  expect_error<ValueError>([&] { r.read(); }, {"f.gz", "cut short"});
  w.close();
  EXPECT_EQ(TFRecordReader::read_all(path, TFRecordOptions().compression("GZIP")),
            std::vector<std::string>{"one"});
}

TEST(TFRecordFormat, ConcatenatedGzipMembersAreOneStream) {
  TempDir dir;
  write_file(dir.file("a.gz"), "GZIP", {"a1", "a2"});
  write_file(dir.file("b.gz"), "GZIP", {"b1"});
  const std::string path = dir.file("ab.gz");
  auto both = read_bytes(dir.file("a.gz"));
  const auto b = read_bytes(dir.file("b.gz"));
  both.insert(both.end(), b.begin(), b.end());
  write_bytes(path, both);
  EXPECT_EQ(TFRecordReader::read_all(path, TFRecordOptions().compression("GZIP")),
            (std::vector<std::string>{"a1", "a2", "b1"}));
}

TEST(TFRecordFormat, FlippedByteNamesFileAndOffset) {
  TempDir dir;
  const std::string path = dir.file("flip.tfrecord");
  write_file(path, "", {"first", "second"});
  auto bytes = read_bytes(path);
  bytes[21 + 12 + 2] ^= 0x10;  // inside the second record's data (the first is 21 bytes)
  write_bytes(path, bytes);
  TFRecordReader r(path);
  EXPECT_EQ(r.read().value(), "first");
  expect_error<ValueError>([&] { r.read(); }, {"flip.tfrecord", "byte 21", "data CRC mismatch"});
}

TEST(TFRecordFormat, CorruptCompressedStreams) {
  TempDir dir;
  for (const std::string compression : {"GZIP", "ZLIB"}) {
    SCOPED_TRACE(compression);
    const std::string path = dir.file("c.tfrecord");
    write_file(path, compression);
    const auto good = read_bytes(path);
    const TFRecordOptions options = TFRecordOptions().compression(compression);
    // Truncated: the stream ends early.
    write_bytes(path, std::vector<unsigned char>(good.begin(), good.end() - 6));
    expect_error<ValueError>([&] { TFRecordReader::read_all(path, options); }, {"c.tfrecord"});
    // A damaged stream: either zlib sees it or a CRC does; both name the file.
    auto bad = good;
    bad[bad.size() / 2] ^= 0xff;
    write_bytes(path, bad);
    expect_error<ValueError>([&] { TFRecordReader::read_all(path, options); },
                             {"c.tfrecord", compression, "corrupt"});
    // Read with the wrong compression.
    write_bytes(path, good);
    expect_error<ValueError>(
        [&] {
          TFRecordReader::read_all(
              path, TFRecordOptions().compression(compression == "GZIP" ? "ZLIB" : "GZIP"));
        },
        {"c.tfrecord", "broken"});
    expect_error<ValueError>([&] { TFRecordReader::read_all(path); }, {"c.tfrecord", "byte 0"});
  }
}

TEST(TFRecordFormat, TruncatedPlainFile) {
  TempDir dir;
  const std::string path = dir.file("t.tfrecord");
  write_file(path, "", {"first", "second"});
  const auto good = read_bytes(path);
  write_bytes(path, std::vector<unsigned char>(good.begin(), good.end() - 2));
  expect_error<ValueError>([&] { TFRecordReader::read_all(path); },
                           {"t.tfrecord", "byte 21", "truncated record"});
}

TEST(TFRecordFormat, SkipCorruptCountsAndGoesOn) {
  TempDir dir;
  for (const std::string compression : {"", "GZIP", "ZLIB"}) {
    SCOPED_TRACE(compression);
    // Two records with a flipped data byte, in plain framing built by encode(), then compressed
    // with zlib directly (the writer would frame the bytes again).
    std::string framed = TFRecordWriter::encode("a") + TFRecordWriter::encode("bad") +
                         TFRecordWriter::encode("c") + TFRecordWriter::encode("worse") +
                         TFRecordWriter::encode("e");
    framed[17 + 12] ^= 1;            // "bad" (the second record starts at byte 17)
    framed[17 + 19 + 17 + 12] ^= 1;  // "worse" (the fourth starts at byte 53)
    const std::string path = dir.file("s.tfrecord");
    if (compression.empty()) {
      write_bytes(path, {framed.begin(), framed.end()});
    } else {
      z_stream z{};
      ASSERT_EQ(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED,
                             compression == "GZIP" ? 31 : 15, 8, Z_DEFAULT_STRATEGY),
                Z_OK);
      std::vector<unsigned char> out(deflateBound(&z, framed.size()));
      z.next_in = reinterpret_cast<Bytef*>(framed.data());
      z.avail_in = static_cast<uInt>(framed.size());
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
      out.resize(z.total_out);
      deflateEnd(&z);
      write_bytes(path, out);
    }
    const TFRecordOptions options = TFRecordOptions().compression(compression);
    expect_error<ValueError>([&] { TFRecordReader::read_all(path, options); },
                             {"s.tfrecord", "byte 17", "data CRC mismatch", "skip_corrupt"});
    TFRecordOptions skipping = options;
    skipping.skip_corrupt(true);
    TFRecordReader r(path, skipping);
    std::vector<std::string> got;
    while (auto rec = r.read()) got.push_back(*rec);
    EXPECT_EQ(got, (std::vector<std::string>{"a", "c", "e"}));
    EXPECT_EQ(r.corrupt_records(), 2);
  }
}

TEST(TFRecordFormat, SkipCorruptEndsAFileWhoseFramingIsLost) {
  TempDir dir;
  const std::string path = dir.file("l.tfrecord");
  write_file(path, "", {"first", "second", "third"});
  auto bytes = read_bytes(path);
  bytes[21] ^= 1;  // the second record's length
  write_bytes(path, bytes);
  TFRecordReader r(path, TFRecordOptions().skip_corrupt(true));
  EXPECT_EQ(r.read().value(), "first");
  EXPECT_FALSE(r.read().has_value());
  EXPECT_EQ(r.corrupt_records(), 1);
}

TEST(TFRecordFormat, HostileLengthIsBoundedBeforeAllocating) {
  TempDir dir;
  const std::string path = dir.file("big.tfrecord");
  // A valid header announcing 2^40 bytes, CRC and all, with nothing after it.
  std::string header(8, '\0');
  header[5] = 1;
  const uint32_t crc = crc32c::mask(crc32c::value(header));
  for (int i = 0; i < 4; ++i) header.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  for (const std::string compression : {"", "GZIP"}) {
    if (compression.empty()) {
      write_bytes(path, {header.begin(), header.end()});
    } else {
      z_stream z{};
      deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
      std::vector<unsigned char> out(256);
      z.next_in = reinterpret_cast<Bytef*>(header.data());
      z.avail_in = static_cast<uInt>(header.size());
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      deflate(&z, Z_FINISH);
      out.resize(z.total_out);
      deflateEnd(&z);
      write_bytes(path, out);
    }
    expect_error<ValueError>(
        [&] { TFRecordReader::read_all(path, TFRecordOptions().compression(compression)); },
        {"big.tfrecord"});
  }
}

TEST(TFRecordDataset, ReadsFilesInOrderAsUint8Records) {
  TempDir dir;
  write_file(dir.file("0.gz"), "GZIP", {"a", "bb"});
  write_file(dir.file("1.gz"), "GZIP", {"ccc"});
  auto ds = data::TFRecordDataset({dir.file("0.gz"), dir.file("1.gz")}, "GZIP", 64);
  EXPECT_EQ(ds.cardinality(), data::kUnknownCardinality);
  for (int pass = 0; pass < 2; ++pass) {
    auto it = ds.make_iterator();
    std::vector<std::string> got;
    while (auto e = it->next()) {
      ASSERT_EQ(e->size(), 1u);
      EXPECT_EQ((*e)[0].dtype(), uint8);
      EXPECT_EQ((*e)[0].rank(), 1);
      got.push_back(data::record_bytes((*e)[0]));
    }
    EXPECT_EQ(got, (std::vector<std::string>{"a", "bb", "ccc"}));
  }
}

TEST(TFRecordDataset, SkipCorruptCounterAndErrors) {
  TempDir dir;
  write_file(dir.file("0.tfrecord"), "", {"a", "b"});
  write_file(dir.file("1.tfrecord"), "", {"c"});
  auto bytes = read_bytes(dir.file("0.tfrecord"));
  bytes[12] ^= 1;  // the first record's data
  write_bytes(dir.file("0.tfrecord"), bytes);
  const std::vector<std::string> files = {dir.file("0.tfrecord"), dir.file("1.tfrecord")};

  auto strict = data::TFRecordDataset(files);
  expect_error<ValueError>([&] { strict.make_iterator()->next(); },
                           {"0.tfrecord", "byte 0", "data CRC mismatch"});

  data::TFRecordDatasetOptions options;
  options.reader.skip_corrupt(true);
  auto ds = data::TFRecordDataset(files, options).batch(8);
  auto batch = ds.make_iterator()->next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ((*batch)[0].dim(0), 2);  // "b" and "c"
  EXPECT_EQ(options.corrupt_records(), 1);

  expect_error<IOError>([&] { data::TFRecordDataset({dir.file("nope")}).make_iterator()->next(); },
                        {"nope"});
  expect_error<ValueError>([&] { data::TFRecordDataset(files, "LZ4"); }, {"LZ4"});
}

}  // namespace
}  // namespace strata
