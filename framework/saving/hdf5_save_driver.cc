#include "framework/saving/hdf5_save_driver.h"

#include <H5FDpublic.h>
#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace strata::saving::hdf5 {

// HDF5 1.13 changed the driver interface (H5FD_class_t gained a version and more callbacks);
// there, files are saved through HDF5's default driver.
#if H5_VERSION_GE(1, 13, 0)

bool use_save_driver(int64_t, SaveStatus*) { return false; }

#else

namespace {

// HDF5 allocates nothing for a driver's file: `open` returns this struct, whose first member
// HDF5 fills and passes back to every callback.
struct SaveFile {
  H5FD_t pub;
  int fd = -1;
  haddr_t eoa = 0;  // end of the address space HDF5 has allocated
  haddr_t eof = 0;  // end of what is (or would have been) written
  dev_t device = 0;
  ino_t inode = 0;
  SaveStatus* status = nullptr;  // error != 0: a write failed, later writes are dropped
};

SaveFile* of(H5FD_t* f) { return reinterpret_cast<SaveFile*>(f); }
const SaveFile* of(const H5FD_t* f) { return reinterpret_cast<const SaveFile*>(f); }

constexpr haddr_t kMaxAddress = (haddr_t(1) << (8 * sizeof(off_t) - 1)) - 1;

bool out_of_range(haddr_t addr, size_t size) {
  return addr == HADDR_UNDEF || addr > kMaxAddress || size > kMaxAddress - addr;
}

H5FD_t* save_open(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  if (name == nullptr || *name == '\0' || maxaddr == 0 || maxaddr == HADDR_UNDEF) return nullptr;
  // The driver information use_save_driver() stored: a SaveStatus pointer.
  const void* info = H5Pget_driver_info(fapl);
  if (info == nullptr) return nullptr;
  SaveStatus* status = *static_cast<SaveStatus* const*>(info);
  if (status == nullptr) return nullptr;
  int oflags = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
  if (flags & H5F_ACC_TRUNC) oflags |= O_TRUNC;
  if (flags & H5F_ACC_CREAT) oflags |= O_CREAT;
  if (flags & H5F_ACC_EXCL) oflags |= O_EXCL;
  const int fd = ::open(name, oflags | O_CLOEXEC, 0666);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return nullptr;
  }
  auto* file = new SaveFile();
  file->fd = fd;
  file->eof = haddr_t(st.st_size);
  file->device = st.st_dev;
  file->inode = st.st_ino;
  file->status = status;
  return &file->pub;
}

herr_t save_close(H5FD_t* f) {
  SaveFile* file = of(f);
  // A lost write that only close() reports (NFS) shows in write_file_atomically's fsync.
  ::close(file->fd);
  delete file;
  return 0;
}

int save_compare(const H5FD_t* a, const H5FD_t* b) {
  if (of(a)->device != of(b)->device) return of(a)->device < of(b)->device ? -1 : 1;
  if (of(a)->inode != of(b)->inode) return of(a)->inode < of(b)->inode ? -1 : 1;
  return 0;
}

herr_t save_query(const H5FD_t*, unsigned long* flags) {
  // What the default driver allows: metadata and small raw data gathered into larger writes.
  if (flags != nullptr) {
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA |
             H5FD_FEAT_DATA_SIEVE | H5FD_FEAT_AGGREGATE_SMALLDATA;
  }
  return 0;
}

haddr_t save_get_eoa(const H5FD_t* f, H5FD_mem_t) { return of(f)->eoa; }

herr_t save_set_eoa(H5FD_t* f, H5FD_mem_t, haddr_t addr) {
  if (addr > kMaxAddress) return -1;
  of(f)->eoa = addr;
  return 0;
}

haddr_t save_get_eof(const H5FD_t* f, H5FD_mem_t) { return of(f)->eof; }

herr_t save_read(H5FD_t* f, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buffer) {
  SaveFile* file = of(f);
  if (out_of_range(addr, size)) return -1;
  auto* out = static_cast<char*>(buffer);
  while (size > 0) {
    const ssize_t n = ::pread(file->fd, out, size, off_t(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;  // past the end of the file: zeros, as in the default driver
    out += n;
    addr += haddr_t(n);
    size -= size_t(n);
  }
  std::memset(out, 0, size);
  return 0;
}

herr_t save_write(H5FD_t* f, H5FD_mem_t, hid_t, haddr_t addr, size_t size, const void* buffer) {
  SaveFile* file = of(f);
  if (out_of_range(addr, size)) return -1;
  const haddr_t end = addr + size;
  const auto* in = static_cast<const char*>(buffer);
  while (size > 0 && file->status->error == 0) {
    const ssize_t n = ::pwrite(file->fd, in, size, off_t(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      file->status->error = n < 0 ? errno : EIO;
      break;
    }
    in += n;
    addr += haddr_t(n);
    size -= size_t(n);
  }
  file->eof = std::max(file->eof, end);
  return 0;
}

herr_t save_truncate(H5FD_t* f, hid_t, hbool_t) {
  SaveFile* file = of(f);
  if (file->eoa != file->eof && file->status->error == 0 &&
      ::ftruncate(file->fd, off_t(file->eoa)) != 0) {
    file->status->error = errno;
  }
  file->eof = file->eoa;
  return 0;
}

H5FD_class_t make_class() {
  H5FD_class_t c;
  std::memset(&c, 0, sizeof(c));
  c.name = "strata_save";
  c.maxaddr = kMaxAddress;
  c.fc_degree = H5F_CLOSE_WEAK;
  c.fapl_size = sizeof(SaveStatus*);  // copied and freed by HDF5 as plain bytes
  c.open = save_open;
  c.close = save_close;
  c.cmp = save_compare;
  c.query = save_query;
  c.get_eoa = save_get_eoa;
  c.set_eoa = save_set_eoa;
  c.get_eof = save_get_eof;
  c.read = save_read;
  c.write = save_write;
  c.truncate = save_truncate;
  const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
  std::copy(map, map + H5FD_MEM_NTYPES, c.fl_map);
  return c;
}

// The driver's id, registered on first use (and again should the library have been closed and
// reopened). Callers hold the HDF5 lock.
hid_t driver_id() {
  static const H5FD_class_t cls = make_class();
  static hid_t id = -1;
  if (id < 0 || H5Iis_valid(id) <= 0) id = H5FDregister(&cls);
  return id;
}

}  // namespace

bool use_save_driver(int64_t fapl, SaveStatus* status) {
  const hid_t id = driver_id();
  return id >= 0 && H5Pset_driver(hid_t(fapl), id, &status) >= 0;
}

#endif

}  // namespace strata::saving::hdf5
