// A small RAII layer over the HDF5 C library, just what Keras' checkpoint layouts need: files,
// groups, string attributes in every encoding h5py produces, and numeric datasets read into and
// written from Tensors.
//
//   hdf5::File f = hdf5::File::create(tmp_path);
//   hdf5::Group root = f.root();
//   root.write_string("backend", "tensorflow");
//   root.write_dataset("dense/dense/kernel:0", kernel);       // intermediate groups created
//   f.close();                                                // flush + close; IOError on failure
//
//   hdf5::File g = hdf5::File::open(path);                    // IOError / ValueError (see below)
//   Tensor k = g.root().read_dataset("dense/dense/kernel:0", float32);
//
// Internal to framework/saving/: <hdf5.h> stays in the .cc (HDF5 ids are carried as int64_t), so
// this header needs no third-party header. HDF5 is not thread-safe; every call into it here holds
// one process-wide (recursive) lock, and HDF5's own error printing is silenced: failures become
// strata errors that name the file and the object. Reading failures are ValueErrors saying the
// file is not a valid HDF5/Keras file; writing failures are IOErrors.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "framework/core/tensor.h"
#include "framework/saving/hdf5_save_driver.h"

namespace strata::saving::hdf5 {

// The lock every HDF5 call in this process runs under. Hold it across a sequence of calls that
// must not interleave with another thread's (the wrapper already takes it per call).
std::unique_lock<std::recursive_mutex> lock_library();

// An open HDF5 object id, closed (under the lock) when the last copy goes away.
class Handle {
 public:
  Handle() = default;
  Handle(int64_t id, void (*close)(int64_t));
  int64_t id() const;
  bool valid() const { return state_ != nullptr; }
  // Gives up ownership: the id will not be closed by this handle (the caller closed it).
  void release();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// What every object of one file shares: its path (for messages), whether it is being written,
// and for a file saved to disk, where its driver reports a failed write (hdf5_save_driver.h).
struct FileContext {
  std::string path;
  bool writable = false;
  std::shared_ptr<SaveStatus> save_status;
  // The file's size when it was opened for reading (0: unknown): no attribute or dataset of a
  // valid file holds more bytes, so a larger claim is damage, refused before allocating it.
  uint64_t size = 0;
  // Variable-length strings are read from the file's bytes (hdf5_vlen_strings.h): those of a
  // file in memory are copied here when first needed; HDF5's addresses start after the user
  // block.
  bool in_memory = false;
  mutable std::shared_ptr<const std::string> image;
  uint64_t base_address = 0;
};

// How a list of strings is stored as an attribute (both are h5py's): variable-length strings
// (h5py 3 for a Python list of str/bytes) or a fixed-length, NUL-padded array (numpy 'S' arrays,
// which Keras' chunked attributes always are). Strata writes fixed-length only (see
// write_string); variable-length is there for tests that build files as h5py 3 does, and is
// read without libhdf5's global-heap reader (hdf5_vlen_strings.h).
enum class StringStorage { kVariableLength, kFixedLength };

class Group {
 public:
  Group() = default;
  Group(Handle handle, std::shared_ptr<const FileContext> file, std::string path);

  // This group's path inside the file ("/", "/model_weights") and the file's path on disk.
  const std::string& path() const { return path_; }
  const std::string& file_path() const { return file_->path; }

  // ---- children (names may be paths "a/b/c", relative to this group) ----
  // Only hard links are followed: a soft or external link on the way (which could lead into
  // another file) is a ValueError naming the link, its target and the file.
  bool has_group(const std::string& name) const;
  bool has_dataset(const std::string& name) const;
  // Opens an existing group (ValueError naming the file and the path when absent).
  Group open_group(const std::string& name) const;
  // Creates a group, and any missing groups on its path (ValueError when it exists already).
  Group create_group(const std::string& name);
  // Names of the direct children (groups and datasets), sorted.
  std::vector<std::string> child_names() const;

  // ---- attributes ----
  bool has_attribute(const std::string& name) const;
  std::vector<std::string> attribute_names() const;
  // A string attribute stored as a scalar or a one-element array, fixed-length (any padding) or
  // variable-length, ASCII or UTF-8.
  std::string read_string(const std::string& name) const;
  // A list of strings in any of those encodings. An empty numeric array (what h5py writes for an
  // empty Python list: float64 of shape (0,)) and an empty dataspace read as an empty list.
  std::vector<std::string> read_string_list(const std::string& name) const;
  // A fixed-length, NUL-padded string scalar (numpy's bytes_; UTF-8 when it has non-ASCII bytes,
  // ASCII otherwise). Never variable-length: those live in HDF5's global heap, whose reading
  // libhdf5 1.10 does not check (a damaged file crashed it in H5HG_read). No size limit in
  // files made by File::create (a large attribute goes to HDF5's dense storage); in-memory
  // files keep HDF5's original format, where an attribute must stay under 64 KB.
  void write_string(const std::string& name, const std::string& value);
  // A one-dimensional string array. `values` must not be empty (see write_empty_list).
  // Fixed-length items are `itemsize` bytes (0: the longest value, at least 1).
  void write_string_list(const std::string& name, const std::vector<std::string>& values,
                         StringStorage storage, size_t itemsize = 0);
  // What h5py writes for an empty list: a float64 array of shape (0,).
  void write_empty_list(const std::string& name);

  // ---- datasets ----
  // Writes `value` (any device) as a little-endian dataset of its shape: float32, float64,
  // int32, int64 and uint8 keep their type; float16/bfloat16 are widened to float32 and bool is
  // stored as uint8 (HDF5 1.10 has no half-precision type; readers convert back on load).
  void write_dataset(const std::string& name, const Tensor& value);
  Shape dataset_shape(const std::string& name) const;
  // Reads a numeric dataset converted to `dtype` (HDF5 converts between numeric types), on the CPU.
  Tensor read_dataset(const std::string& name, DType dtype) const;

 private:
  std::string where(const std::string& name) const;  // "'<file>' at /group/name"
  // The type of the object at `name` (H5I_BADID: none); ValueError for a link not followed.
  int type_of(const std::string& name) const;
  // The errno of a failed write to this (saved) file, 0 when none.
  int write_error() const;
  // ValueError when an attribute or dataset of a file being read claims more bytes (`count`
  // items of `item_size`) than the whole file has: damage, refused before allocating for it.
  void check_claimed_size(const char* kind, const std::string& name, size_t count,
                          size_t item_size) const;
  // Throws the IOError of fail() when a write to this file has failed.
  void check_written(const std::string& what, const std::string& name) const;
  // Reading: ValueError saying the file is not valid; writing: IOError with the OS error.
  [[noreturn]] void fail(const std::string& what, const std::string& name) const;

  Handle handle_;
  std::shared_ptr<const FileContext> file_;
  std::string path_;
};

class File {
 public:
  // A new, empty file at `path` (truncated if it exists). IOError when it cannot be created.
  // It is written in HDF5's 1.8 format (checksummed metadata, attributes of any size), through
  // the save driver (a failed write is an IOError from the call that finds it, or from close(),
  // and never leaves HDF5 unable to close the file), and starts with the user block that
  // close() fills with the checksum (file_checksum.h).
  static File create(const std::string& path);
  // An existing file, read-only. IOError when it is missing or unreadable; ValueError when it is
  // not a valid HDF5 file (wrong signature, truncated, corrupt, checksum mismatch: the checksum
  // is verified before HDF5 reads the file).
  static File open(const std::string& path);
  // A file held in memory (HDF5's core driver, nothing on disk): the weights file inside a
  // .keras zip archive. `name` stands for it in messages ("m.keras/model.weights.h5").
  static File create_in_memory(const std::string& name);
  // Reads the file image `bytes` (a copy is made); ValueError naming `name` when it is not a
  // valid HDF5 file.
  static File open_image(const std::string& bytes, const std::string& name);

  Group root() const;
  const std::string& path() const { return context_->path; }
  // Flushes and closes the file now (IOError on failure, e.g. a full disk), so that the caller
  // can fsync it, then writes its checksum (files made by create()). Every Group of this file
  // must be gone (or unused) by then. The file is closed even when this throws.
  void close();
  // The bytes of the whole file as it would be on disk (flushed first): what create_in_memory
  // wrote, to be stored in an archive.
  std::string image() const;

 private:
  File(Handle handle, std::shared_ptr<FileContext> context);

  // The context first: the handle, destroyed before it, may close the file, whose driver still
  // reports to the context's save status then.
  std::shared_ptr<FileContext> context_;
  Handle handle_;
};

}  // namespace strata::saving::hdf5
