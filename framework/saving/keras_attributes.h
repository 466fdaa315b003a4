// Keras' string-list attributes (save_attributes_to_hdf5_group / load_attributes_from_hdf5_group
// in Keras 2's hdf5_format.py), and small conventions shared by the Keras file layouts.
//
// HDF5's original file format keeps attributes in a 64 KB object header, so Keras splits a list
// whose fixed-length form (numpy 'S' array: count x longest item) exceeds 64512 bytes into
// "<name>0", "<name>1", ... as numpy.array_split would, each a fixed-length NUL-padded array. An
// unsplit list is one such array too (as Keras wrote it with h5py 2; h5py 3 turns Keras' Python
// list into variable-length strings, which Strata reads but never writes: hdf5_file.h); an
// empty list as h5py writes [] (float64, shape (0,)).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "framework/saving/hdf5_file.h"
#include "framework/variables/variable.h"

namespace strata::saving {

// Keras 2's HDF5_OBJECT_HEADER_LIMIT.
inline constexpr size_t kHdf5ObjectHeaderLimit = 64512;

// What the layouts record as the writer ("keras_version", "backend" attributes).
inline constexpr const char* kKerasVersion = "2.15.0";
inline constexpr const char* kKerasBackend = "tensorflow";

void write_string_list_attribute(hdf5::Group& group, const std::string& name,
                                 const std::vector<std::string>& values);
// The list under `name`, or joined from "<name>0", "<name>1", ...; empty when neither exists.
std::vector<std::string> read_string_list_attribute(const hdf5::Group& group,
                                                    const std::string& name);
bool has_string_list_attribute(const hdf5::Group& group, const std::string& name);

// A variable's name as TensorFlow/Keras 2 spell it in files: "dense/kernel" -> "dense/kernel:0".
std::string keras2_weight_name(const Variable& variable);

// Keras' logging.warning: "WARNING: <message>" on stderr.
void warn(const std::string& message);

}  // namespace strata::saving
