// IDX reading and writing through zlib's gz* functions, which read plain files transparently,
// so one code path serves MNIST's plain files and Fashion-MNIST's .gz files.
#include "datasets/idx.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <vector>

#include "datasets/reading.h"
#include "framework/core/error.h"

namespace strata::data {
namespace {

constexpr int kMaxRank = 16;  // MNIST uses 1 and 3; anything near 255 is a corrupt byte
constexpr uint64_t kMaxDeflateRatio = 1032;  // the most deflate can expand its input
constexpr uint64_t kReadStep = uint64_t(64) << 20;  // data is read 64 MiB at a time

struct GzFile {
  gzFile f = nullptr;
  ~GzFile() { if (f) gzclose(f); }
};

std::string hex_bytes(const unsigned char* b, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = 0; i < n; ++i) {
    s += kDigits[b[i] >> 4];
    s += kDigits[b[i] & 15];
  }
  return s;
}

bool known_type(unsigned char t) {
  return t == 0x08 || t == 0x09 || t == 0x0B || t == 0x0C || t == 0x0D || t == 0x0E;
}

size_t type_size(unsigned char t) {
  switch (t) {
    case 0x08: case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C: case 0x0D: return 4;
    default: return 8;
  }
}

const char* type_name(unsigned char t) {
  switch (t) {
    case 0x08: return "ubyte";
    case 0x09: return "sbyte";
    case 0x0B: return "short";
    case 0x0C: return "int";
    case 0x0D: return "float";
    default: return "double";
  }
}

DType type_dtype(unsigned char t) {
  switch (t) {
    case 0x08: return uint8;
    case 0x09: case 0x0B: case 0x0C: return int32;
    case 0x0D: return float32;
    default: return float64;
  }
}

uint64_t load_be(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

void store_be(unsigned char* p, uint64_t v, size_t n) {
  for (size_t i = n; i-- > 0;) { p[i] = static_cast<unsigned char>(v & 0xff); v >>= 8; }
}

bool has_gzip_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char m[2] = {0, 0};
  in.read(reinterpret_cast<char*>(m), 2);
  return in.gcount() == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

// Reads up to n bytes; returns how many arrived. A corrupt (not merely short) gzip stream
// throws, since "truncated" would then mislead.
size_t read_some(gzFile f, unsigned char* dst, size_t n, const std::string& where) {
  size_t got = 0;
  while (got < n) {
    const unsigned chunk = unsigned(std::min<size_t>(n - got, size_t(1) << 30));
    const int r = gzread(f, dst + got, chunk);
    if (r <= 0) {
      int err = Z_OK;
      const char* msg = gzerror(f, &err);
      if (r < 0 && err != Z_BUF_ERROR) {
        throw ValueError(where + ": corrupt gzip data (" + msg + ")");
      }
      break;  // end of file (Z_BUF_ERROR is zlib's "unexpected end of file")
    }
    got += size_t(r);
  }
  return got;
}

}  // namespace

Tensor read_idx(const std::string& path) {
  const std::string where = "read_idx: " + path;
  const uint64_t file_size = detail::regular_file_size(path, where);
  const bool gzip = has_gzip_magic(path);
  GzFile file;
  file.f = gzopen(path.c_str(), "rb");
  if (!file.f) throw IOError(where + ": cannot open: " + std::strerror(errno));
  // 1 MiB reads for MNIST's tens of MB; a small file gets a buffer its size (zlib's minimum is
  // 8 KiB), not 2 MiB of buffers allocated for a few hundred bytes.
  gzbuffer(file.f, unsigned(std::clamp<uint64_t>(file_size, 8192, 1 << 20)));
  const std::string kind = gzip ? " (gzip)" : "";

  unsigned char magic[4];
  const size_t got_magic = read_some(file.f, magic, 4, where);
  if (got_magic < 4) {
    throw ValueError(where + kind + ": truncated header: expected a 4-byte magic number, found " +
                     std::to_string(got_magic) + " bytes");
  }
  if (magic[0] != 0 || magic[1] != 0 || !known_type(magic[2])) {
    throw ValueError(where + kind + ": wrong magic number: expected 0x0000TTRR (TT = type 08, 09, "
                     "0b, 0c, 0d or 0e; RR = rank), found " + hex_bytes(magic, 4));
  }
  const unsigned char type = magic[2];
  const int rank = magic[3];
  if (rank > kMaxRank) {
    throw ValueError(where + kind + ": absurd rank " + std::to_string(rank) + " (at most " +
                     std::to_string(kMaxRank) + " expected)");
  }
  std::vector<unsigned char> dim_bytes(size_t(rank) * 4);
  const size_t got_dims = read_some(file.f, dim_bytes.data(), dim_bytes.size(), where);
  if (got_dims < dim_bytes.size()) {
    throw ValueError(where + kind + ": truncated header: expected " +
                     std::to_string(dim_bytes.size()) + " bytes of dimensions for rank " +
                     std::to_string(rank) + ", found " + std::to_string(got_dims));
  }
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  uint64_t count = 1;
  bool overflow = false;
  for (int i = 0; i < rank; ++i) {
    dims[size_t(i)] = int64_t(load_be(&dim_bytes[size_t(i) * 4], 4));
    const uint64_t d = uint64_t(dims[size_t(i)]);
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / 8 / d) {
      overflow = true;
    }
    count *= uint64_t(dims[size_t(i)]);
  }
  const Shape shape(dims);
  const uint64_t header_bytes = 4 + uint64_t(rank) * 4;
  const uint64_t data_bytes = overflow ? 0 : count * type_size(type);
  const std::string declared = "shape " + shape.to_string() + " of " + type_name(type);
  if (overflow) {
    throw ValueError(where + kind + ": absurd dimensions: " + declared + " needs more than 2^61 "
                     "bytes of data (a corrupt header?)");
  }
  if (!gzip) {
    // A plain file's size is exact: checked before allocating anything for the data.
    const uint64_t have = file_size - header_bytes;
    if (data_bytes > have) {
      throw ValueError(where + ": truncated: the header declares " + declared + ", " +
                       std::to_string(data_bytes) + " bytes of data; the file has " +
                       std::to_string(have) + " after its " + std::to_string(header_bytes) +
                       "-byte header");
    }
    if (data_bytes < have) {
      throw ValueError(where + ": " + std::to_string(have - data_bytes) +
                       " unexpected trailing bytes: " + declared + " needs " +
                       std::to_string(data_bytes) + " bytes of data, the file has " +
                       std::to_string(have));
    }
  } else if (data_bytes > file_size * kMaxDeflateRatio + 1024) {
    // Deflate expands at most ~1032:1, so a gzip file can't hold more than that.
    throw ValueError(where + kind + ": absurd dimensions: " + declared + " needs " +
                     std::to_string(data_bytes) + " bytes of data, but a gzip file of " +
                     std::to_string(file_size) + " bytes can hold at most " +
                     std::to_string(file_size * kMaxDeflateRatio + 1024) +
                     " (file truncated or corrupt?)");
  }

  // Read in steps, the buffer growing with the data that really arrives: a truncated gzip
  // file that declares gigabytes costs only what it holds.
  std::vector<unsigned char> raw;
  uint64_t got = 0;
  while (got < data_bytes) {
    const uint64_t want = std::min(data_bytes - got, kReadStep);
    try {
      raw.resize(size_t(got + want));
    } catch (const std::bad_alloc&) {
      throw ResourceExhaustedError(where + kind + ": out of memory reading " + declared + " (" +
                                   std::to_string(data_bytes) + " bytes); free memory or raise "
                                   "the process's memory limit");
    }
    const size_t n = read_some(file.f, raw.data() + got, size_t(want), where);
    got += n;
    if (n < want) break;
  }
  if (got < data_bytes) {
    throw ValueError(where + kind + ": truncated data: the header declares " + declared + ", " +
                     std::to_string(data_bytes) + " bytes of data; found " + std::to_string(got));
  }
  unsigned char extra;
  if (gzip && read_some(file.f, &extra, 1, where) == 1) {
    throw ValueError(where + kind + ": unexpected trailing bytes after the " +
                     std::to_string(data_bytes) + " bytes of data that " + declared + " needs");
  }

  Tensor out = detail::empty_tensor(shape, type_dtype(type), where);
  const size_t n = size_t(count);
  const unsigned char* p = raw.data();
  switch (type) {
    case 0x08: if (n) std::memcpy(out.data<uint8_t>(), p, n); break;
    case 0x09: {
      int32_t* o = out.data<int32_t>();
      for (size_t i = 0; i < n; ++i) o[i] = int8_t(p[i]);
      break;
    }
    case 0x0B: {
      int32_t* o = out.data<int32_t>();
      for (size_t i = 0; i < n; ++i) o[i] = int16_t(load_be(p + 2 * i, 2));
      break;
    }
    case 0x0C: {
      int32_t* o = out.data<int32_t>();
      for (size_t i = 0; i < n; ++i) o[i] = int32_t(uint32_t(load_be(p + 4 * i, 4)));
      break;
    }
    case 0x0D: {
      float* o = out.data<float>();
      for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = uint32_t(load_be(p + 4 * i, 4));
        std::memcpy(&o[i], &bits, 4);
      }
      break;
    }
    default: {
      double* o = out.data<double>();
      for (size_t i = 0; i < n; ++i) {
        const uint64_t bits = load_be(p + 8 * i, 8);
        std::memcpy(&o[i], &bits, 8);
      }
      break;
    }
  }
  return out;
}

void write_idx(const std::string& path, const Tensor& t, bool gzip) {
  switch (t.dtype()) {
    case DType::kUInt8: return write_idx(path, t, gzip, IdxType::kUInt8);
    case DType::kInt32: return write_idx(path, t, gzip, IdxType::kInt32);
    case DType::kFloat32: return write_idx(path, t, gzip, IdxType::kFloat32);
    case DType::kFloat64: return write_idx(path, t, gzip, IdxType::kFloat64);
    default:
      throw DTypeError(std::string("write_idx: ") + path + ": unsupported dtype " +
                       dtype_name(t.dtype()) + " (expected uint8, int32, float32 or float64)");
  }
}

void write_idx(const std::string& path, const Tensor& t, bool gzip, IdxType type) {
  const std::string where = "write_idx: " + path;
  const auto code = static_cast<unsigned char>(type);
  if (!known_type(code)) throw ValueError(where + ": unknown IDX type " + hex_bytes(&code, 1));
  const bool floating = code == 0x0D || code == 0x0E;
  if (floating ? !is_floating(t.dtype()) : !is_integral(t.dtype())) {
    throw DTypeError(where + ": cannot write a " + dtype_name(t.dtype()) + " tensor as IDX " +
                     type_name(code) + " (expected a" + (floating ? " floating" : "n integer") +
                     " dtype)");
  }
  if (t.rank() > kMaxRank) {
    throw ValueError(where + ": rank " + std::to_string(t.rank()) + " exceeds " +
                     std::to_string(kMaxRank));
  }
  const size_t header = 4 + size_t(t.rank()) * 4;
  const size_t esize = type_size(code);
  std::vector<unsigned char> bytes(header + size_t(t.numel()) * esize, 0);
  bytes[2] = code;
  bytes[3] = static_cast<unsigned char>(t.rank());
  for (int i = 0; i < t.rank(); ++i) {
    if (uint64_t(t.dim(i)) > std::numeric_limits<uint32_t>::max()) {
      throw ValueError(where + ": dimension " + std::to_string(t.dim(i)) +
                       " does not fit IDX's uint32");
    }
    store_be(&bytes[4 + size_t(i) * 4], uint64_t(t.dim(i)), 4);
  }
  unsigned char* p = bytes.data() + header;
  if (floating) {
    const std::vector<double> v = t.to_vector<double>();
    for (size_t i = 0; i < v.size(); ++i) {
      if (code == 0x0D) {
        const float f = float(v[i]);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        store_be(p + 4 * i, bits, 4);
      } else {
        uint64_t bits;
        std::memcpy(&bits, &v[i], 8);
        store_be(p + 8 * i, bits, 8);
      }
    }
  } else {
    int64_t lo = 0, hi = 255;
    if (code == 0x09) { lo = -128; hi = 127; }
    if (code == 0x0B) { lo = -32768; hi = 32767; }
    if (code == 0x0C) { lo = std::numeric_limits<int32_t>::min(); hi = std::numeric_limits<int32_t>::max(); }
    const std::vector<int64_t> v = t.to_vector<int64_t>();
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] < lo || v[i] > hi) {
        throw ValueError(where + ": element " + std::to_string(i) + " = " + std::to_string(v[i]) +
                         " is outside IDX " + type_name(code) + "'s range [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
      }
      store_be(p + esize * i, uint64_t(v[i]), esize);
    }
  }
  // "T" writes a plain file through the same gz* interface.
  GzFile file;
  file.f = gzopen(path.c_str(), gzip ? "wb" : "wbT");
  if (!file.f) throw IOError(where + ": cannot open for writing: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const unsigned chunk = unsigned(std::min<size_t>(bytes.size() - done, size_t(1) << 30));
    if (gzwrite(file.f, bytes.data() + done, chunk) != int(chunk)) {
      throw IOError(where + ": write failed");
    }
    done += chunk;
  }
  const int rc = gzclose(file.f);
  file.f = nullptr;
  if (rc != Z_OK) throw IOError(where + ": write failed on close");
}

}  // namespace strata::data
