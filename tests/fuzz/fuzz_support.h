// What every fuzz target in tests/fuzz/ shares. A target is one .cc file that defines
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
//     // feeds the bytes to one Strata reader, catching strata::Error only: any other exception
//     // (std::bad_alloc, a std::filesystem error, ...) or a crash is a finding
//   void strata::fuzz::write_seeds(const std::string& dir);
//     // optional: writes small valid inputs into `dir`, made with Strata's own writers, so the
//     // fuzzer starts from real files (a target without it starts from an empty corpus)
//
// and one line in tests/fuzz/CMakeLists.txt: strata_add_fuzz_target(fuzz_name fuzz_name.cc).
// Run with STRATA_FUZZ_WRITE_SEEDS=<dir>, a target writes its seeds and exits (scripts/fuzz
// does this before fuzzing, and ctest's fuzz.*.seeds tests before replaying them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::fuzz {

// Defined by each target (a weak empty default exists).
void write_seeds(const std::string& dir);

// Writes `bytes` to dir/name (creating dir). Throws std::runtime_error when it cannot.
void write_seed(const std::string& dir, const std::string& name, std::string_view bytes);

// The input as a file, for readers that take a path: one scratch file per process (in /dev/shm
// when it exists, so no disk is touched), rewritten on every call and removed at exit.
const std::string& scratch_file(const uint8_t* data, size_t size);

inline std::string_view as_view(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace strata::fuzz
