// Internal: a shared library opened with dlopen the first time one of its functions is called,
// rather than linked. The CUDA backend reaches cuBLASLt, cuDNN and NCCL through these
// (framework/cuda/cuda_libraries.h), so a CUDA build of Strata starts, and trains on the CPU,
// on a machine without those libraries, and a CPU run does not map their hundreds of MB.
// PyTorch and TensorFlow load them the same way. No CUDA headers: compiled in every build.
//
//   LazyLibrary& lib = ...;                                  // one instance per library
//   auto create = lib.function<decltype(&::cudnnCreate)>("cudnnCreate");  // loads, looks up
//
// A library's functions are then defined with C linkage, each forwarding to the loaded one
// (STRATA_FORWARDER and STRATA_FORWARD_TO below), so the code that calls them is unchanged and
// the program links without the library (TensorFlow's "stub" files work the same way).
//
// A library that cannot be loaded, or lacks a function, is a DeviceError whose message names the
// library, every file tried with the loader's reason, what needs the library and the fix.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "framework/core/error.h"

namespace strata {

// What a LazyLibrary loads, and what its errors tell the user.
struct LazyLibrarySpec {
  std::string name;                      // "cuDNN"
  std::string soname;                    // "libcudnn.so.9": the versioned name, ABI-compatible
  std::vector<std::string> search_dirs;  // tried after the loader's own search (LD_LIBRARY_PATH,
                                         // ld.so.cache, system folders), e.g. where CMake found it
  std::string built_with;                // "9.19.0": the version Strata was compiled against
  std::string needed_for;                // "convolutions, pooling and batch normalization on GPUs"
  std::string install_hint;              // "install cuDNN 9 for CUDA 13 (pip: nvidia-cudnn-cu13)"
};

class LazyLibrary {
 public:
  // Opens `file` (a soname or a path); on failure returns nullptr with the reason in *error.
  // dlopen by default; tests inject their own to count calls or to fail.
  using Opener = void* (*)(const char* file, std::string* error);

  explicit LazyLibrary(LazyLibrarySpec spec, Opener opener = nullptr);
  // The library stays loaded for the life of the process (unloading CUDA libraries while their
  // handles or exit handlers may still run is unsafe), so a LazyLibrary is never destroyed in use.
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // Whether the library can be loaded; loads it on the first call. Never throws.
  bool available();
  // The dlopen handle, loading on the first call (once, whichever thread comes first; a failure
  // is remembered, not retried); DeviceError when it cannot be loaded.
  void* handle();
  // The address of `symbol` in the library (loading it first); DeviceError naming the library and
  // the symbol when it is missing, e.g. an older release than Strata was built against.
  void* symbol(const char* name);

  // symbol() as a function pointer of type Fn (POSIX guarantees the conversion dlsym needs).
  template <typename Fn>
  Fn function(const char* name) {
    return reinterpret_cast<Fn>(symbol(name));
  }

 private:
  void load();
  std::string load_error_message() const;

  LazyLibrarySpec spec_;
  Opener opener_;
  std::once_flag loaded_;
  void* handle_ = nullptr;
  std::vector<std::string> attempts_;  // "file: reason" for each file that failed to open
};

// For error messages: the text a library's string function returns (cudnnGetErrorString & co.),
// or `fallback` when that function cannot be reached or returns null, so that describing one
// error never raises another in its place.
template <typename Call>
std::string library_text_or(Call&& call, const std::string& fallback) {
  try {
    const char* text = call();
    return text != nullptr ? std::string(text) : fallback;
  } catch (const Error&) {
    return fallback;
  }
}

}  // namespace strata

// The body of a forwarder: look `name` up in `library` on the first call (a function-local
// static: initialised once, thread-safely, and tried again if the lookup threw), then call it.
// The forwarder is a definition of the vendor header's declaration (two C functions of one name
// cannot differ) and decltype(&::name) takes the pointer type from that declaration, so a wrong
// signature does not compile.
#define STRATA_FORWARD_TO(library, name, ...)                                            \
  static const auto strata_forward_fn_ = (library).function<decltype(&::name)>(#name); \
  return strata_forward_fn_(__VA_ARGS__)

// Forwarders are hidden: a libstrata.so must not export cudnnCreate & co., or it would capture
// the calls of other libraries in the process that use their own copy of cuDNN.
#define STRATA_FORWARDER extern "C" __attribute__((visibility("hidden")))
