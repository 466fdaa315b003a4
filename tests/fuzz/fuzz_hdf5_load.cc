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
// Strata's handles): run with -detect_leaks=0, or ASAN_OPTIONS=detect_leaks=0.
//
//   make_hdf5_seeds corpus/                      # tests/fuzz/make_hdf5_seeds.cc
//   fuzz_hdf5_load -detect_leaks=0 -max_len=65536 -rss_limit_mb=2048 corpus/
//
// Build with clang and -fsanitize=fuzzer,address,undefined. Include dirs: the repository root
// and framework/include; link strata::strata (built with -fsanitize=fuzzer-no-link so that the
// loaders are instrumented and guide the fuzzer; an uninstrumented library links too).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <strata/strata.h>

#include "framework/saving/training_checkpoint.h"
#include "layers/load_model.h"

namespace {

// A RAM-backed file when possible: every input is written once and read three times.
const std::string& input_path() {
  static const std::string path = [] {
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::is_directory("/dev/shm", ec)
                                          ? std::filesystem::path("/dev/shm")
                                          : std::filesystem::temp_directory_path(ec);
    return (dir / ("strata_fuzz_hdf5_" + std::to_string(::getpid()) + ".h5")).string();
  }();
  return path;
}

// The model every weights file is loaded into: the architecture make_hdf5_seeds saves.
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

bool write_input(const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(input_path().c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Loaders announce what they restore and warn about skipped weights; the fuzzer's output is
  // for its own reports. (LLVMFuzzerInitialize is fuzz_support.cc's: it writes the seeds.)
  static const bool quiet = [] {
    std::cout.rdbuf(nullptr);
    std::cerr.rdbuf(nullptr);
    return true;
  }();
  (void)quiet;
  if (!write_input(data, size)) return 0;
  const std::string& path = input_path();
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
