// libFuzzer target for reading model and weights files: the input is written to a file and read
// back through the library's loaders, as a user's load would read a damaged or hostile file:
//   - Model::load_weights into a small built model (Keras 2 weights and full-model .h5 files,
//     Keras 3 .weights.h5 files and .keras zips; the layout is read from the contents),
//   - load_model (Keras 2 full-model .h5, .keras),
//   - read_training_checkpoint (BackupAndRestore's backups).
// Every input must end in success or a strata::Error; anything else escaping (another
// exception, a crash, a sanitizer report, a huge allocation) is a bug. Files Strata writes carry
// a checksum (framework/saving/file_checksum.h), which turns almost every mutation into one
// error before HDF5 parses anything; the seeds therefore come in both forms, and a mutated
// checksum line makes the file read without one.
//
// The *-vlen seeds hold variable-length strings as h5py 3 (so Keras 2) writes them: libhdf5
// 1.10.8's global-heap reader crashed on them within seconds of fuzzing (H5HG_read,
// negative-size memcpy), which is why Strata reads them itself (hdf5_vlen_strings.h).
// libhdf5 leaks a few hundred bytes on some damaged object headers (H5O protect failures, not
// Strata's handles): those are suppressed below (__lsan_default_suppressions).
//
//   scripts/fuzz 300 fuzz_hdf5_load        # seeds from write_seeds (make_hdf5_seeds.cc)
//
// Built by tests/fuzz/CMakeLists.txt (strata_add_fuzz_target, with the HDF5 C library that the
// seed writer uses).
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include <strata/strata.h>

#include "framework/saving/training_checkpoint.h"
#include "fuzz/fuzz_support.h"
#include "layers/load_model.h"

namespace {

// The model every weights file is loaded into: the architecture write_seeds saves.
strata::Sequential& target_model() {
  static strata::Sequential* model = [] {
    auto* m = new strata::Sequential({std::make_shared<strata::Dense>(4, "relu"),
                                      std::make_shared<strata::Dense>(2)});
    m->build({-1, 3});
    m->compile("adam", "mse");
    return m;
  }();
  return *model;
}

}  // namespace

// libhdf5 leaks a few hundred bytes on some damaged object headers (in its own code, when
// decoding one fails): suppressed by module, so that a leak in Strata's code still counts.
extern "C" const char* __lsan_default_suppressions() { return "leak:libhdf5\n"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Loaders announce what they restore and warn about skipped weights; the fuzzer's output is
  // for its own reports. (LLVMFuzzerInitialize is fuzz_support.cc's: it writes the seeds.)
  static const bool quiet = [] {
    std::cout.rdbuf(nullptr);
    std::cerr.rdbuf(nullptr);
    return true;
  }();
  (void)quiet;
  const std::string& path = strata::fuzz::scratch_file(data, size);
  strata::Sequential& model = target_model();
  try {
    model.load_weights(path);
  } catch (const strata::Error&) {
  }
  try {
    model.load_weights(path, /*by_name=*/true, /*skip_mismatch=*/true);
  } catch (const strata::Error&) {
  }
  try {
    strata::load_model(path);
  } catch (const strata::Error&) {
  }
  try {
    strata::saving::read_training_checkpoint(model, path);
  } catch (const strata::Error&) {
  }
  return 0;
}
