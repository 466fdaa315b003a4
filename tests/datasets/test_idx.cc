// IDX reading/writing: round trips of every element type, plain and gzip, and the errors a
// damaged or foreign file produces.
#include <zlib.h>

#include "datasets/idx.h"
#include "framework/core/error.h"
#include "support/test_helpers.h"
#include "datasets/memory_limit.h"
#include "datasets/temp_dir.h"

namespace strata {
namespace {

using data::IdxType;
using data::read_idx;
using data::write_idx;
using testing::expect_error;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

struct TypeCase {
  IdxType type;
  Tensor values;
  DType read_dtype;
};

std::vector<TypeCase> type_cases() {
  return {
      {IdxType::kUInt8, tensor<uint8_t>({0, 1, 127, 128, 255, 7}, {2, 3}), uint8},
      {IdxType::kInt8, tensor<int32_t>({-128, -1, 0, 1, 127, 5}, {3, 2}), int32},
      {IdxType::kInt16, tensor<int32_t>({-32768, -300, 0, 300, 32767, 1}, {6}), int32},
      {IdxType::kInt32, tensor<int32_t>({INT32_MIN, -70000, 0, 70000, INT32_MAX, 2}, {1, 2, 3}), int32},
      {IdxType::kFloat32, tensor<float>({-1.5f, 0.f, 3.25f, 1e-30f, 6e30f, 2.f}, {2, 3}), float32},
      {IdxType::kFloat64, tensor<double>({-1.5, 0., 3.25, 1e-300, 6e300, 2.}, {3, 2}), float64},
  };
}

TEST(Idx, RoundTripsEveryTypePlainAndGzip) {
  TempDir dir;
  for (const TypeCase& c : type_cases()) {
    for (bool gzip : {false, true}) {
      SCOPED_TRACE(std::to_string(int(c.type)) + (gzip ? " gzip" : " plain"));
      const std::string path = dir.file("t.idx");
      write_idx(path, c.values, gzip, c.type);
      const auto bytes = read_bytes(path);
      ASSERT_GE(bytes.size(), 4u);
      if (gzip) {
        EXPECT_EQ(bytes[0], 0x1f);
        EXPECT_EQ(bytes[1], 0x8b);
      } else {
        EXPECT_EQ(bytes[2], static_cast<unsigned char>(c.type));
        EXPECT_EQ(bytes[3], c.values.rank());
      }
      const Tensor back = read_idx(path);
      EXPECT_EQ(back.dtype(), c.read_dtype);
      EXPECT_EQ(back.shape(), c.values.shape());
      EXPECT_EQ(back.to_vector<double>(), c.values.to_vector<double>());
    }
  }
}

TEST(Idx, ReadsTheMnistHeaderBigEndian) {
  TempDir dir;
  // A hand-written ubyte file: magic 00 00 08 03, dims 2 x 1 x 3 (big-endian), 6 bytes.
  const std::string path = dir.file("images");
  write_bytes(path, {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 3, 10, 20, 30, 40, 50, 60});
  const Tensor t = read_idx(path);
  EXPECT_EQ(t.dtype(), uint8);
  EXPECT_EQ(t.shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(t.to_vector<int>(), (std::vector<int>{10, 20, 30, 40, 50, 60}));
  // int type: 0x00000102 = 258, big-endian.
  write_bytes(path, {0, 0, 0x0C, 1, 0, 0, 0, 1, 0, 0, 1, 2});
  EXPECT_EQ(read_idx(path).to_vector<int>(), std::vector<int>{258});
}

TEST(Idx, DefaultTypeFollowsDtype) {
  TempDir dir;
  const std::string path = dir.file("f");
  write_idx(path, tensor<float>({1.f, 2.f}, {2}));
  EXPECT_EQ(read_bytes(path)[2], 0x0D);
  write_idx(path, tensor<uint8_t>({1, 2}, {2}), true);
  EXPECT_EQ(read_idx(path).dtype(), uint8);
  expect_error<DTypeError>([&] { write_idx(path, tensor<int64_t>({1}, {1})); },
                           {"write_idx", "int64", "uint8, int32, float32 or float64"});
  expect_error<ValueError>(
      [&] { write_idx(path, tensor<int32_t>({200}, {1}), false, IdxType::kInt8); },
      {"write_idx", "200", "sbyte", "[-128, 127]"});
}

TEST(Idx, MissingFile) {
  TempDir dir;
  const std::string path = (dir.path() / "nope-idx3-ubyte").string();
  expect_error<IOError>([&] { read_idx(path); }, {"read_idx", path, "no such file"});
}

TEST(Idx, WrongMagic) {
  TempDir dir;
  const std::string path = dir.file("bad");
  write_bytes(path, {'P', 'K', 3, 4, 0, 0, 0, 0});
  expect_error<ValueError>([&] { read_idx(path); },
                           {path, "wrong magic number", "expected 0x0000TTRR", "found 0x504b0304"});
  write_bytes(path, {0, 0, 0x07, 1, 0, 0, 0, 0});  // unknown type byte
  expect_error<ValueError>([&] { read_idx(path); }, {path, "found 0x00000701"});
}

TEST(Idx, TruncatedHeader) {
  TempDir dir;
  const std::string path = dir.file("short");
  write_bytes(path, {0, 0});
  expect_error<ValueError>([&] { read_idx(path); },
                           {path, "truncated header", "4-byte magic", "found 2 bytes"});
  write_bytes(path, {0, 0, 8, 3, 0, 0, 0, 2, 0, 0});  // rank 3 needs 12 bytes of dims
  expect_error<ValueError>([&] { read_idx(path); },
                           {path, "truncated header", "expected 12 bytes", "found 6"});
}

TEST(Idx, TruncatedDataPlainAndGzip) {
  TempDir dir;
  const Tensor t = zeros({4, 5}, uint8);
  for (bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    const std::string full = dir.file("full"), cut = dir.file("cut");
    write_idx(full, t, false);
    auto bytes = read_bytes(full);
    bytes.erase(bytes.end() - 7, bytes.end());  // 13 of 20 data bytes
    if (gzip) {
      gzFile f = gzopen(cut.c_str(), "wb");
      gzwrite(f, bytes.data(), unsigned(bytes.size()));
      gzclose(f);
    } else {
      write_bytes(cut, bytes);
    }
    if (gzip) {
      expect_error<ValueError>([&] { read_idx(cut); },
                               {cut, "(gzip)", "truncated data", "[4,5]", "20 bytes", "found 13"});
    } else {
      // Plain files are checked against their size before reading.
      expect_error<ValueError>([&] { read_idx(cut); }, {cut, "[4,5]", "20 bytes", "has 13"});
    }
  }
}

// MNIST's image header (10 images of 28x28) over half the data: the message says truncated and
// gives both sizes (it used to call the dimensions absurd).
TEST(Idx, TruncatedPlainFileSaysTruncated) {
  TempDir dir;
  const std::string path = dir.file("t10k-images-idx3-ubyte");
  std::vector<unsigned char> bytes = {0, 0, 8, 3, 0, 0, 0, 10, 0, 0, 0, 28, 0, 0, 0, 28};
  bytes.resize(bytes.size() + 3920, 7);
  write_bytes(path, bytes);
  expect_error<ValueError>([&] { read_idx(path); },
                           {path, "truncated: the header declares shape [10,28,28] of ubyte",
                            "7840 bytes of data", "the file has 3920 after its 16-byte header"});
}

// A 1 MiB gzip file may declare up to a GB (deflate's ratio); cut short, it must cost what it
// holds, not what it declares: under a tight memory limit it is still a plain ValueError.
TEST(Idx, TruncatedGzipDeclaringAGigabyteUnderAMemoryLimit) {
  TempDir dir;
  const std::string path = dir.file("big.gz");
  gzFile f = gzopen(path.c_str(), "wb");
  const unsigned char header[] = {0, 0, 0x08, 2, 0, 0, 0, 1, 0x3b, 0x9a, 0xca, 0x00};  // [1, 1e9]
  gzwrite(f, header, sizeof header);
  std::vector<unsigned char> noise(size_t(1) << 20);  // incompressible: the file stays ~1 MiB
  uint32_t x = 12345;
  for (unsigned char& b : noise) b = static_cast<unsigned char>((x = x * 1664525u + 1013904223u) >> 24);
  gzwrite(f, noise.data(), unsigned(noise.size()));
  gzclose(f);
  testing::expect_error_under_memory_limit<ValueError>(
      [&] { read_idx(path); }, uint64_t(512) << 20,
      {path, "(gzip)", "truncated data", "1000000000 bytes of data", "found 1048576"});
}

TEST(Idx, TruncatedGzipStream) {
  TempDir dir;
  const std::string path = dir.file("x.gz");
  write_idx(path, arange(0, 1000, 1, float32), true);
  auto bytes = read_bytes(path);
  bytes.erase(bytes.begin() + long(bytes.size() / 2), bytes.end());  // cut the compressed stream
  write_bytes(path, bytes);
  expect_error<ValueError>([&] { read_idx(path); }, {path, "(gzip)"});
}

TEST(Idx, TrailingBytes) {
  TempDir dir;
  const std::string path = dir.file("long");
  write_bytes(path, {0, 0, 8, 1, 0, 0, 0, 2, 1, 2, 3});
  expect_error<ValueError>([&] { read_idx(path); },
                           {path, "1 unexpected trailing bytes", "[2]", "needs 2 bytes"});
}

TEST(Idx, AbsurdDims) {
  TempDir dir;
  const std::string path = dir.file("huge");
  // 0xffffffff^3 floats: would overflow; 1e9 x 1e9 bytes: far beyond the file.
  write_bytes(path, {0, 0, 0x0D, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                     0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4});
  expect_error<ValueError>([&] { read_idx(path); }, {path, "absurd dimensions", "float"});
  // A plain file's size is exact, so too few bytes for the dimensions reads as truncated.
  write_bytes(path, {0, 0, 0x08, 2, 0x3b, 0x9a, 0xca, 0x00, 0x3b, 0x9a, 0xca, 0x00, 1, 2});
  expect_error<ValueError>([&] { read_idx(path); },
                           {path, "truncated", "[1000000000,1000000000]",
                            "1000000000000000000 bytes of data", "the file has 2"});
  // gzip: the deflate ratio bound rejects it before allocating anything.
  gzFile f = gzopen(path.c_str(), "wb");
  const unsigned char header[] = {0, 0, 0x08, 2, 0x3b, 0x9a, 0xca, 0x00, 0x3b, 0x9a, 0xca, 0x00};
  gzwrite(f, header, sizeof header);
  gzclose(f);
  expect_error<ValueError>([&] { read_idx(path); }, {path, "(gzip)", "absurd dimensions"});
  write_bytes(path, {0, 0, 0x08, 200});
  expect_error<ValueError>([&] { read_idx(path); }, {path, "absurd rank 200"});
}

}  // namespace
}  // namespace strata
