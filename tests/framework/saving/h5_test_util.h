// HDF5 C API helpers for the saving tests: they inspect the files Strata writes and build files
// the way h5py/Keras do, independently of Strata's own wrapper (framework/saving/hdf5_file.h).
#pragma once

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <strata/strata.h>

#include "framework/saving/file_checksum.h"

namespace strata::testing::h5 {

// An HDF5 id closed by the matching H5?close on destruction.
class Id {
 public:
  explicit Id(hid_t id = -1) : id_(id) {}
  ~Id() {
    if (id_ < 0) return;
    switch (H5Iget_type(id_)) {
      case H5I_FILE: H5Fclose(id_); break;
      case H5I_GROUP: H5Gclose(id_); break;
      case H5I_DATASET: H5Dclose(id_); break;
      case H5I_ATTR: H5Aclose(id_); break;
      case H5I_DATATYPE: H5Tclose(id_); break;
      case H5I_DATASPACE: H5Sclose(id_); break;
      case H5I_GENPROP_LST: H5Pclose(id_); break;
      default: break;
    }
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  operator hid_t() const { return id_; }  // NOLINT: pass straight to the C API
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
};

// Dense(4, relu) -> Dense(2) on 3 inputs, compiled with Adam and trained one step, so a saved
// file holds weights, a model config and optimizer slots.
inline std::shared_ptr<Sequential> adam_trained_model() {
  set_random_seed(3);
  auto m = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(4, "relu"), std::make_shared<Dense>(2)});
  m->build({-1, 3});
  m->compile("adam", "mse");
  m->train_on_batch(random_normal({8, 3}), random_normal({8, 2}));
  return m;
}

inline void quiet() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

inline hid_t open_file(const std::string& path) {
  quiet();
  return H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
}
// Opens a file Strata wrote for editing with the C API. Its checksum header, which the edit
// would contradict, is zeroed first: the file then reads as one without a checksum (the HDF5
// user block stays, empty).
inline hid_t open_for_editing(const std::string& path) {
  quiet();
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string head(saving::kChecksumHeaderSize, '\0');
  f.read(head.data(), std::streamsize(head.size()));
  if (f && saving::has_checksum_header(head)) {
    f.seekp(0);
    f.write(std::string(saving::kChecksumHeaderSize, '\0').data(),
            std::streamsize(saving::kChecksumHeaderSize));
  }
  f.close();
  return H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
}
inline hid_t create_file(const std::string& path) {
  quiet();
  return H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
}

inline bool exists(hid_t loc, const std::string& path) {
  std::string prefix;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    prefix += (prefix.empty() ? "" : "/") + path.substr(start, end - start);
    if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    start = end + 1;
  }
  return true;
}

inline bool is_group(hid_t loc, const std::string& path) {
  if (!exists(loc, path)) return false;
  H5O_info_t info;
  if (H5Oget_info_by_name(loc, path.c_str(), &info, H5P_DEFAULT) < 0) return false;
  return info.type == H5O_TYPE_GROUP;
}

inline std::vector<std::string> children(hid_t group) {
  std::vector<std::string> names;
  H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
             [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
               static_cast<std::vector<std::string>*>(data)->emplace_back(name);
               return 0;
             },
             &names);
  return names;
}

inline std::vector<std::string> attribute_names(hid_t obj) {
  std::vector<std::string> names;
  H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, nullptr,
              [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
                static_cast<std::vector<std::string>*>(data)->emplace_back(name);
                return 0;
              },
              &names);
  return names;
}

// How an attribute is stored.
struct AttrInfo {
  H5T_class_t type_class = H5T_NO_CLASS;
  bool variable_length = false;
  size_t size = 0;  // bytes per fixed-length string / element
  H5T_str_t pad = H5T_STR_ERROR;
  H5T_cset_t cset = H5T_CSET_ERROR;
  bool scalar = false;
  std::vector<hsize_t> dims;
  bool is_float64 = false;
};

inline AttrInfo attr_info(hid_t obj, const std::string& name) {
  AttrInfo info;
  Id attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
  if (!attr.ok()) {
    ADD_FAILURE() << "no attribute " << name;
    return info;
  }
  Id type(H5Aget_type(attr)), space(H5Aget_space(attr));
  info.type_class = H5Tget_class(type);
  info.size = H5Tget_size(type);
  info.is_float64 = H5Tequal(type, H5T_IEEE_F64LE) > 0;
  if (info.type_class == H5T_STRING) {
    info.variable_length = H5Tis_variable_str(type) > 0;
    info.pad = H5Tget_strpad(type);
    info.cset = H5Tget_cset(type);
  }
  info.scalar = H5Sget_simple_extent_type(space) == H5S_SCALAR;
  const int rank = H5Sget_simple_extent_ndims(space);
  info.dims.resize(size_t(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space, info.dims.data(), nullptr);
  return info;
}

// The strings of a string attribute (fixed-length: trailing NULs removed).
inline std::vector<std::string> read_strings(hid_t obj, const std::string& name) {
  Id attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
  Id type(H5Aget_type(attr)), space(H5Aget_space(attr));
  const size_t n = size_t(H5Sget_simple_extent_npoints(space));
  std::vector<std::string> out;
  if (H5Tis_variable_str(type) > 0) {
    Id mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem, H5T_VARIABLE);
    H5Tset_cset(mem, H5Tget_cset(type));
    std::vector<char*> p(n);
    H5Aread(attr, mem, p.data());
    for (char* s : p) out.emplace_back(s ? s : "");
    H5Dvlen_reclaim(mem, space, H5P_DEFAULT, p.data());
  } else {
    const size_t size = H5Tget_size(type);
    std::vector<char> buf(n * size);
    Id mem(H5Tcopy(type));
    H5Aread(attr, mem, buf.data());
    for (size_t i = 0; i < n; ++i) {
      std::string s(buf.data() + i * size, size);
      while (!s.empty() && s.back() == '\0') s.pop_back();
      out.push_back(s);
    }
  }
  return out;
}

// ---- writers, as h5py writes ----

// A fixed-length string array (numpy 'S<itemsize>').
inline void write_fixed_strings(hid_t obj, const std::string& name,
                                const std::vector<std::string>& values, H5T_str_t pad,
                                size_t itemsize = 0, H5T_cset_t cset = H5T_CSET_ASCII) {
  for (const auto& v : values) itemsize = std::max(itemsize, v.size());
  itemsize = std::max<size_t>(itemsize, 1);
  Id type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type, itemsize);
  H5Tset_strpad(type, pad);
  H5Tset_cset(type, cset);
  hsize_t dims[1] = {values.size()};
  Id space(H5Screate_simple(1, dims, nullptr));
  std::vector<char> buf(values.size() * itemsize, '\0');
  for (size_t i = 0; i < values.size(); ++i) std::copy(values[i].begin(), values[i].end(), buf.begin() + long(i * itemsize));
  Id attr(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_GE(H5Awrite(attr, type, buf.data()), 0);
}

// Variable-length strings: a 1-D array, or a scalar when `scalar` (one value).
inline void write_vlen_strings(hid_t obj, const std::string& name,
                               const std::vector<std::string>& values, H5T_cset_t cset,
                               bool scalar = false) {
  Id type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, cset);
  hsize_t dims[1] = {values.size()};
  Id space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, nullptr));
  std::vector<const char*> p;
  for (const auto& v : values) p.push_back(v.c_str());
  Id attr(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_GE(H5Awrite(attr, type, p.data()), 0);
}

// Rewrites every fixed-length string attribute of the (closed) file at `path` as
// variable-length strings of the same shape: Strata's files as h5py 3, and so Keras 2, would
// store their strings. The checksum header is removed first (open_for_editing).
inline void rewrite_strings_as_variable_length(const std::string& path) {
  Id f(open_for_editing(path));
  ASSERT_TRUE(f.ok()) << path;
  H5Ovisit(
      f, H5_INDEX_NAME, H5_ITER_INC,
      [](hid_t root, const char* object_name, const H5O_info_t*, void*) -> herr_t {
        Id obj(H5Oopen(root, object_name, H5P_DEFAULT));
        for (const std::string& name : attribute_names(obj)) {
          std::vector<std::string> values;
          bool scalar = false;
          {
            Id attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
            Id type(H5Aget_type(attr)), space(H5Aget_space(attr));
            if (H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) > 0) continue;
            scalar = H5Sget_simple_extent_type(space) == H5S_SCALAR;
          }
          values = read_strings(obj, name);
          H5Adelete(obj, name.c_str());
          write_vlen_strings(obj, name, values, H5T_CSET_UTF8, scalar);
        }
        return 0;
      },
      nullptr);
}

// np.asarray([]): float64, shape (0,).
inline void write_empty_float64(hid_t obj, const std::string& name) {
  hsize_t dims[1] = {0};
  Id space(H5Screate_simple(1, dims, nullptr));
  Id attr(H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_TRUE(attr.ok());
}

inline hid_t create_group(hid_t loc, const std::string& path) {
  Id lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl, 1);
  return H5Gcreate2(loc, path.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT);
}

// A float32 dataset (intermediate groups created), stored with `file_type`.
inline void write_floats(hid_t loc, const std::string& path, const std::vector<float>& data,
                         const std::vector<hsize_t>& dims, hid_t file_type = H5T_IEEE_F32LE) {
  Id lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl, 1);
  Id space(dims.empty() ? H5Screate(H5S_SCALAR)
                        : H5Screate_simple(int(dims.size()), dims.data(), nullptr));
  Id ds(H5Dcreate2(loc, path.c_str(), file_type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_TRUE(ds.ok()) << path;
  ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
}

// A dataset's stored type, shape and values (as float).
struct DatasetInfo {
  bool found = false;
  bool f32le = false, i64le = false, f64le = false;
  bool scalar = false;
  std::vector<hsize_t> dims;
  std::vector<double> values;
};

inline DatasetInfo dataset(hid_t loc, const std::string& path) {
  DatasetInfo info;
  if (!exists(loc, path)) return info;
  Id ds(H5Dopen2(loc, path.c_str(), H5P_DEFAULT));
  if (!ds.ok()) return info;
  info.found = true;
  Id type(H5Dget_type(ds)), space(H5Dget_space(ds));
  info.f32le = H5Tequal(type, H5T_IEEE_F32LE) > 0;
  info.i64le = H5Tequal(type, H5T_STD_I64LE) > 0;
  info.f64le = H5Tequal(type, H5T_IEEE_F64LE) > 0;
  info.scalar = H5Sget_simple_extent_type(space) == H5S_SCALAR;
  const int rank = H5Sget_simple_extent_ndims(space);
  info.dims.resize(size_t(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space, info.dims.data(), nullptr);
  info.values.resize(size_t(H5Sget_simple_extent_npoints(space)));
  if (!info.values.empty()) {
    H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, info.values.data());
  }
  return info;
}

// Removes the directories temp_dir() made when the test binary exits.
struct TempDirs {
  std::vector<std::filesystem::path> made;
  ~TempDirs() {
    std::error_code ec;
    for (const auto& d : made) std::filesystem::remove_all(d, ec);
  }
};
inline TempDirs temp_dirs;

// A fresh directory below the system temp dir for one test (removed at exit).
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("strata_saving_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  temp_dirs.made.push_back(dir);
  return dir;
}

}  // namespace strata::testing::h5
