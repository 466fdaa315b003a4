// libzip and HDF5 helpers for the .keras tests: they build archives the way Keras 3's
// saving_lib writes them (zip entries metadata.json, config.json, model.weights.h5, stored) and
// inspect the ones Strata writes, independently of Strata's own wrappers.
#pragma once

#include <zip.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/framework/saving/h5_test_util.h"

namespace strata::testing::keras3 {

namespace h5 = testing::h5;

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A zip archive of `entries` in order, stored (as Keras writes) or deflated.
inline void write_zip(const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& entries,
                      bool deflate = false) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr) << path;
  for (const auto& [name, bytes] : entries) {
    zip_source_t* s = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    const zip_int64_t i = zip_file_add(z, name.c_str(), s, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(i, 0) << name;
    zip_set_file_compression(z, zip_uint64_t(i), deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  ASSERT_EQ(zip_close(z), 0) << path;
}

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // ZIP_CM_STORE, ZIP_CM_DEFLATE, ...
  std::string bytes;
};

// Every entry of an archive, in order.
inline std::vector<ZipEntry> read_zip(const std::string& path) {
  std::vector<ZipEntry> out;
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (z == nullptr) {
    ADD_FAILURE() << "cannot open " << path << " as a zip archive";
    return out;
  }
  for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
    zip_stat_t st;
    zip_stat_index(z, zip_uint64_t(i), 0, &st);
    ZipEntry e{st.name, st.comp_method, std::string(st.size, '\0')};
    zip_file_t* f = zip_fopen_index(z, zip_uint64_t(i), 0);
    if (f != nullptr) {
      zip_fread(f, e.bytes.data(), e.bytes.size());
      zip_fclose(f);
    }
    out.push_back(std::move(e));
  }
  zip_discard(z);
  return out;
}

inline std::string zip_entry(const std::string& path, const std::string& name) {
  for (const ZipEntry& e : read_zip(path)) {
    if (e.name == name) return e.bytes;
  }
  ADD_FAILURE() << path << " has no entry " << name;
  return "";
}

// Scalars as h5py writes numpy scalars: int64 and float32, shape ().
inline void write_int64_scalar(hid_t loc, const std::string& path, int64_t value) {
  h5::Id lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl, 1);
  h5::Id space(H5Screate(H5S_SCALAR));
  h5::Id ds(H5Dcreate2(loc, path.c_str(), H5T_STD_I64LE, space, lcpl, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_TRUE(ds.ok()) << path;
  ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), 0);
}

// An HDF5 file built by `fill` (given the file id) at a temporary path, returned as bytes: what
// Keras puts in the archive as model.weights.h5.
template <typename Fill>
std::string hdf5_image(const std::string& dir, Fill fill) {
  const std::string path = dir + "/weights_image.h5";
  {
    h5::Id f(h5::create_file(path));
    EXPECT_TRUE(f.ok());
    fill(hid_t(f));
  }
  return file_bytes(path);
}

// A group "vars" below `path` ("" for the root) with Keras' "name" attribute.
inline void make_vars(hid_t f, const std::string& path, const std::string& name) {
  h5::Id g(h5::create_group(f, path.empty() ? "vars" : path + "/vars"));
  h5::write_vlen_strings(g, "name", {name}, H5T_CSET_UTF8, /*scalar=*/true);
}

// The contents of an HDF5 image, opened through a temporary file for inspection.
class Hdf5Image {
 public:
  Hdf5Image(const std::string& dir, const std::string& bytes) : path_(dir + "/inspect.h5") {
    write_bytes(path_, bytes);
    file_ = h5::open_file(path_);
  }
  ~Hdf5Image() {
    if (file_ >= 0) H5Fclose(file_);
  }
  Hdf5Image(const Hdf5Image&) = delete;
  Hdf5Image& operator=(const Hdf5Image&) = delete;
  hid_t id() const { return file_; }

 private:
  std::string path_;
  hid_t file_ = -1;
};

}  // namespace strata::testing::keras3
