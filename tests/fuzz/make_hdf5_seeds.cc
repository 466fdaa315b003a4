// Writes the seed corpus of fuzz_hdf5_load into a directory, from a model built here (no binary
// files are kept in the repository): the target's write_seeds (tests/fuzz/fuzz_support.h), run
// by scripts/fuzz and ctest's fuzz.fuzz_hdf5_load.seeds:
//
//   STRATA_FUZZ_WRITE_SEEDS=corpus/ fuzz_hdf5_load
//
// The model is the one fuzz_hdf5_load loads into (Dense(4, relu) -> Dense(2) on 3 inputs,
// compiled with Adam, trained one step so its slots exist). Seeds:
//   keras2.h5, model.h5, keras3.weights.h5, backup.h5   as Strata writes them (checksummed)
//   *-nochecksum.*                                      the same with the checksum header
//                                                       zeroed: HDF5 parses every mutation
//   keras2-vlen.h5, model-vlen.h5                       every string attribute rewritten as
//                                                       variable-length strings, as h5py 3 (and
//                                                       so Keras 2) writes them
//   model.keras                                         a Keras 3 archive
//
// Built into fuzz_hdf5_load (tests/fuzz/CMakeLists.txt), which links the HDF5 C library for it.
#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "framework/saving/file_checksum.h"
#include "framework/saving/training_checkpoint.h"
#include "tests/fuzz/fuzz_support.h"

namespace fs = std::filesystem;
using namespace strata;

namespace {

void copy_without_checksum(const fs::path& from, const fs::path& to) {
  std::ifstream in(from, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (saving::has_checksum_header(bytes)) {
    bytes.replace(0, saving::kChecksumHeaderSize, saving::kChecksumHeaderSize, '\0');
  }
  std::ofstream(to, std::ios::binary | std::ios::trunc) << bytes;
}

// Rewrites every fixed-length string attribute of `obj` as variable-length strings of the same
// shape (h5py 3's encoding of Python str/bytes and lists of them).
void to_variable_length(hid_t obj, const char* name) {
  const hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  const hid_t type = H5Aget_type(attr);
  const hid_t space = H5Aget_space(attr);
  const bool fixed = H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) <= 0;
  std::vector<std::string> values;
  if (fixed) {
    const size_t n = size_t(H5Sget_simple_extent_npoints(space));
    const size_t size = H5Tget_size(type);
    std::vector<char> buffer(n * size);
    H5Aread(attr, type, buffer.data());
    for (size_t i = 0; i < n; ++i) {
      std::string s(buffer.data() + i * size, size);
      s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
      values.push_back(s);
    }
  }
  H5Aclose(attr);
  H5Tclose(type);
  if (fixed) {
    H5Adelete(obj, name);
    const hid_t vlen = H5Tcopy(H5T_C_S1);
    H5Tset_size(vlen, H5T_VARIABLE);
    H5Tset_cset(vlen, H5T_CSET_UTF8);
    std::vector<const char*> pointers;
    for (const std::string& v : values) pointers.push_back(v.c_str());
    const hid_t rewritten = H5Acreate2(obj, name, vlen, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(rewritten, vlen, pointers.data());
    H5Aclose(rewritten);
    H5Tclose(vlen);
  }
  H5Sclose(space);
}

herr_t rewrite_object(hid_t root, const char* name, const H5O_info_t*, void*) {
  const hid_t obj = H5Oopen(root, name, H5P_DEFAULT);
  // Names are collected first: attributes cannot be deleted while they are being iterated.
  std::vector<std::string> names;
  H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, nullptr,
              [](hid_t, const char* n, const H5A_info_t*, void* d) -> herr_t {
                static_cast<std::vector<std::string>*>(d)->emplace_back(n);
                return 0;
              },
              &names);
  for (const std::string& n : names) to_variable_length(obj, n.c_str());
  H5Oclose(obj);
  return 0;
}

void with_variable_length_strings(const fs::path& from, const fs::path& to) {
  copy_without_checksum(from, to);
  const hid_t f = H5Fopen(to.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return;
  H5Ovisit(f, H5_INDEX_NAME, H5_ITER_INC, rewrite_object, nullptr);
  H5Fclose(f);
}

}  // namespace

namespace strata::fuzz {

void write_seeds(const std::string& dir_name) {
  const fs::path dir(dir_name);
  fs::create_directories(dir);
  set_random_seed(1);
  Sequential model({std::make_shared<Dense>(4, "relu"), std::make_shared<Dense>(2)});
  model.build({-1, 3});
  model.compile("adam", "mse");
  model.train_on_batch(random_normal({8, 3}), random_normal({8, 2}));

  model.save_weights((dir / "keras2.h5").string());
  model.save((dir / "model.h5").string());
  model.save_weights((dir / "keras3.weights.h5").string());
  saving::write_training_checkpoint(
      model, (dir / "backup.h5").string(),
      R"({"epoch": 1, "step": 0, "data": {"pass_rng": {"seed": "1", "offset": "0"},)"
      R"( "consumed": 0, "spans_epochs": false, "pipeline_at_pass_start": [],)"
      R"( "pipeline_now": []}, "rng": {"seed": "1", "offset": "0"}, "learning_rate": 0.001})");
  model.save((dir / "model.keras").string());
  for (const char* name : {"keras2", "model", "backup"}) {
    copy_without_checksum(dir / (std::string(name) + ".h5"),
                          dir / (std::string(name) + "-nochecksum.h5"));
  }
  copy_without_checksum(dir / "keras3.weights.h5", dir / "keras3-nochecksum.weights.h5");
  with_variable_length_strings(dir / "keras2.h5", dir / "keras2-vlen.h5");
  with_variable_length_strings(dir / "model.h5", dir / "model-vlen.h5");
}

}  // namespace strata::fuzz
