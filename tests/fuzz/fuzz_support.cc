#include "fuzz/fuzz_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "framework/core/error.h"
#include "framework/cpu/cpu_caching_allocator.h"

// Defaults for every target, so that one run by hand behaves as under scripts/fuzz: a malloc
// the machine could not satisfy (over 2 GiB, libFuzzer's RSS limit) returns nullptr, as it
// would in production, and Strata's allocator must turn that into a ResourceExhaustedError. An
// operator new that large still aborts (ASan cannot throw std::bad_alloc): a finding, since
// outside the sanitizer that bad_alloc would escape the reader.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=2048";
}

namespace strata::fuzz {
namespace {

std::string g_scratch;

void remove_scratch() {
  if (!g_scratch.empty()) std::remove(g_scratch.c_str());
}

}  // namespace

__attribute__((weak)) void write_seeds(const std::string&) {}

void write_seed(const std::string& dir, const std::string& name, std::string_view bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream out(std::filesystem::path(dir) / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error("cannot write seed " + dir + "/" + name);
}

const std::string& scratch_file(const uint8_t* data, size_t size) {
  if (g_scratch.empty()) {
    std::error_code ec;
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm", ec)
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
    g_scratch = (base / ("strata_fuzz_" + std::to_string(getpid()))).string();
    std::atexit(remove_scratch);
  }
  std::FILE* f = std::fopen(g_scratch.c_str(), "wb");
  if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) {
    std::perror(g_scratch.c_str());
    std::abort();  // the harness's own failure, not the reader's: stop loudly
  }
  return g_scratch;
}

}  // namespace strata::fuzz

// libFuzzer calls this once before fuzzing.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  if (const char* dir = std::getenv("STRATA_FUZZ_WRITE_SEEDS")) {
    try {
      strata::fuzz::write_seeds(dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "writing seeds into %s failed: %s\n", dir, e.what());
      std::exit(1);
    }
    std::exit(0);
  }
  // scripts/fuzz gives each target 2 GiB (-rss_limit_mb). A file that declares a model or
  // dataset larger than that is answered with the ResourceExhaustedError a smaller machine
  // gives, not reported as an out-of-memory finding; the cache counts toward this limit, so
  // idle blocks from earlier inputs cannot push the process over.
  strata::cpu::set_allocation_limit(size_t(1) << 30);
  return 0;
}
