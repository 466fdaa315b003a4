#include "framework/saving/hdf5_vlen_strings.h"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "framework/core/error.h"

namespace strata::saving::hdf5 {
namespace {

constexpr const char* kRawTag = "strata-vlen-reference";
// A stored reference: length (4 bytes), collection address (8: HDF5's default, and h5py's),
// object index (4).
constexpr size_t kReferenceSize = 16;
constexpr size_t kCollectionHeader = 16;  // "GCOL", version, 3 reserved, size (8)
constexpr size_t kObjectHeader = 16;      // index (2), references (2), reserved (4), size (8)

uint64_t little_endian(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// The conversion from a variable-length string to the opaque kRawTag type: the buffer already
// holds the elements as stored, which is what is wanted, so converting is doing nothing.
herr_t keep_stored_form(hid_t src, hid_t dst, H5T_cdata_t* cdata, size_t, size_t, size_t, void*,
                        void*, hid_t) {
  if (cdata->command != H5T_CONV_INIT) return 0;
  if (H5Tget_class(dst) != H5T_OPAQUE || H5Tis_variable_str(src) <= 0 ||
      H5Tget_size(src) != kReferenceSize) {
    return -1;
  }
  char* tag = H5Tget_tag(dst);
  const bool ours = tag != nullptr && std::strcmp(tag, kRawTag) == 0;
  H5free_memory(tag);
  cdata->need_bkg = H5T_BKG_NO;
  return ours ? 0 : -1;  // -1: not this conversion, HDF5 looks further
}

// The opaque type H5Aread fills with stored references, or -1; the caller closes it. The
// conversion to it is registered once per library lifetime (HDF5 keeps only the classes of the
// types given, so this one can go once read).
hid_t reference_type() {
  static bool registered = false;
  const hid_t type = H5Tcreate(H5T_OPAQUE, kReferenceSize);
  if (type < 0 || H5Tset_tag(type, kRawTag) < 0) {
    if (type >= 0) H5Tclose(type);
    return -1;
  }
  if (!registered) {
    const hid_t vlen = H5Tcopy(H5T_C_S1);
    registered = vlen >= 0 && H5Tset_size(vlen, H5T_VARIABLE) >= 0 &&
                 H5Tregister(H5T_PERS_SOFT, "strata_vlen_reference", vlen, type,
                             keep_stored_form) >= 0;
    if (vlen >= 0) H5Tclose(vlen);
  }
  if (!registered) {
    H5Tclose(type);
    return -1;
  }
  return type;
}

// Reads byte ranges of the file (its image, or the file on disk through one descriptor).
class Reader {
 public:
  explicit Reader(const FileBytes& file) : file_(file) {
    if (file_.image != nullptr) {
      size_ = file_.image->size();
      return;
    }
    fd_ = ::open(file_.path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd_ >= 0 && ::fstat(fd_, &st) == 0) size_ = uint64_t(st.st_size);
  }
  ~Reader() {
    if (fd_ >= 0) ::close(fd_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  uint64_t size() const { return size_; }

  // Bytes [offset, offset + n); false when they are not all in the file.
  bool read(uint64_t offset, size_t n, unsigned char* out) const {
    if (offset > size_ || n > size_ - offset) return false;
    if (file_.image != nullptr) {
      std::memcpy(out, file_.image->data() + offset, n);
      return true;
    }
    while (n > 0) {
      const ssize_t got = ::pread(fd_, out, n, off_t(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      out += got;
      offset += uint64_t(got);
      n -= size_t(got);
    }
    return true;
  }

 private:
  const FileBytes& file_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// A global heap collection, checked as libhdf5 walks it, with bounds: object index -> where its
// data starts in `bytes` and how long it is.
struct Collection {
  std::vector<unsigned char> bytes;
  std::map<uint64_t, std::pair<size_t, uint64_t>> objects;
};

// Reads and checks the collection at file offset `at`; an empty string, or what is wrong.
std::string load_collection(const Reader& reader, uint64_t at, Collection& out) {
  unsigned char header[kCollectionHeader];
  if (!reader.read(at, sizeof(header), header)) return "its heap collection lies outside the file";
  if (std::memcmp(header, "GCOL", 4) != 0 || header[4] != 1) {
    return "no heap collection where it points (bad signature or version)";
  }
  const uint64_t size = little_endian(header + 8, 8);
  if (size < kCollectionHeader || size > reader.size() - at) {
    return "its heap collection claims " + std::to_string(size) + " bytes, past the end of the file";
  }
  out.bytes.resize(size_t(size));
  if (!reader.read(at, size_t(size), out.bytes.data())) return "its heap collection is unreadable";
  size_t p = kCollectionHeader;
  while (p < size) {
    if (size - p < kObjectHeader) break;  // a tail too small for an object: free space
    const unsigned char* object = out.bytes.data() + p;
    const uint64_t index = little_endian(object, 2);
    const uint64_t length = little_endian(object + 8, 8);
    if (index == 0) {  // the free space: its size includes its header, and it ends the walk
      if (length < kObjectHeader || length > size - p) return "its heap collection's free space is damaged";
      break;
    }
    if (length > size - p - kObjectHeader) {
      return "object " + std::to_string(index) + " of its heap collection overruns it";
    }
    out.objects[index] = {p + kObjectHeader, length};
    p += kObjectHeader + size_t((length + 7) / 8 * 8);  // data padded to 8 bytes
  }
  return "";
}

}  // namespace

std::vector<std::string> read_variable_length_strings(int64_t attr, size_t count,
                                                      const FileBytes& file,
                                                      const std::string& where) {
  const auto damaged = [&](const std::string& what) {
    return ValueError("Loading: attribute " + where + ": " + what +
                      ": not a valid HDF5/Keras file (truncated or corrupt)");
  };
  const hid_t raw = reference_type();
  std::vector<unsigned char> references(count * kReferenceSize);
  const bool read = raw >= 0 && H5Aread(hid_t(attr), raw, references.data()) >= 0;
  if (raw >= 0) H5Tclose(raw);
  if (!read) {
    H5Eclear2(H5E_DEFAULT);
    throw damaged("its variable-length strings cannot be read");
  }
  const Reader reader(file);
  std::map<uint64_t, Collection> collections;
  std::vector<std::string> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const unsigned char* ref = references.data() + i * kReferenceSize;
    const uint64_t length = little_endian(ref, 4);
    const uint64_t address = little_endian(ref + 4, 8);
    const uint64_t index = little_endian(ref + 12, 4);
    if (length == 0) {
      out.emplace_back();
      continue;
    }
    const std::string item = "string " + std::to_string(i);
    if (address > reader.size() || file.base > reader.size() - address) {  // base + address
      throw damaged(item + " points outside the file");
    }
    auto it = collections.find(address);
    if (it == collections.end()) {
      Collection c;
      const std::string problem = load_collection(reader, file.base + address, c);
      if (!problem.empty()) throw damaged(item + ": " + problem);
      it = collections.emplace(address, std::move(c)).first;
    }
    const auto object = it->second.objects.find(index);
    if (object == it->second.objects.end()) {
      throw damaged(item + " refers to object " + std::to_string(index) +
                    ", which its heap collection lacks");
    }
    const auto [offset, stored] = object->second;
    if (stored < length) {
      throw damaged(item + " claims " + std::to_string(length) + " bytes, its heap object holds " +
                    std::to_string(stored));
    }
    out.emplace_back(reinterpret_cast<const char*>(it->second.bytes.data() + offset), size_t(length));
  }
  return out;
}

}  // namespace strata::saving::hdf5
