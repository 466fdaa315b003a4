// Variable-length string attributes (what h5py 3, and so Keras 2, writes for Python strings and
// lists of them) read without libhdf5's global-heap reader.
//
// Why: libhdf5 1.10.8 trusts the global heap and the references into it. A damaged file made
// H5HG_read copy a negative or oversized length (segfault, or a heap overflow), index past its
// object table, or loop forever decoding a collection whose object has size 0; in Strata's
// byte-flip runs over such files, dozens of single-byte changes crashed or hung the process.
//
// How: the attribute is read through a registered HDF5 conversion to an opaque type that hands
// back each element's stored reference (length, heap collection address, object index) as it
// is on disk; the collection is then read from the file's bytes and checked here (signature,
// version, size within the file, every object inside the collection, the index present, the
// object as long as the string) before its bytes are copied. Any inconsistency is a ValueError
// naming the attribute and the file.
//
// Internal to framework/saving/ (hdf5_file.cc). Callers hold the HDF5 lock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata::saving::hdf5 {

// Where a file's bytes can be read: its path, or its image for a file held in memory; and the
// offset HDF5's addresses are relative to (the size of the file's user block).
struct FileBytes {
  std::string path;
  std::shared_ptr<const std::string> image;
  uint64_t base = 0;
};

// The `count` strings of the open variable-length string attribute `attr`. `where` names it in
// errors ("'/layer_names' in 'w.h5'").
std::vector<std::string> read_variable_length_strings(int64_t attr, size_t count,
                                                      const FileBytes& file,
                                                      const std::string& where);

}  // namespace strata::saving::hdf5
