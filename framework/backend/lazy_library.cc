#include "framework/backend/lazy_library.h"

#include <dlfcn.h>
#include <link.h>

#include <utility>

#include "framework/core/error.h"

namespace strata {
namespace {

// RTLD_NOW: a library whose own dependencies are missing fails here, with the loader's reason,
// instead of killing the process at its first call ("symbol lookup error"). RTLD_LOCAL: its
// symbols do not take part in resolving anyone else's (another copy of cuDNN in the process,
// e.g. PyTorch's, keeps its own).
void* open_with_dlopen(const char* file, std::string* error) {
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();  // per thread in glibc
    *error = why != nullptr ? why : "dlopen failed without a reason";
  }
  return handle;
}

// The file a handle was loaded from, for messages ("" if the loader will not say).
std::string loaded_path(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    dlerror();
    return "";
  }
  return map->l_name;
}

}  // namespace

LazyLibrary::LazyLibrary(LazyLibrarySpec spec, Opener opener)
    : spec_(std::move(spec)), opener_(opener != nullptr ? opener : &open_with_dlopen) {}

void LazyLibrary::load() {
  // The bare soname first: the loader's own search, as if the library were linked
  // (LD_LIBRARY_PATH, the executable's RUNPATH, ld.so.cache, the system folders).
  std::vector<std::string> files{spec_.soname};
  for (const std::string& dir : spec_.search_dirs) {
    if (!dir.empty()) files.push_back(dir + "/" + spec_.soname);
  }
  for (const std::string& file : files) {
    std::string why;
    handle_ = opener_(file.c_str(), &why);
    if (handle_ != nullptr) return;
    // dlerror's text starts with the file it tried; an injected opener's may not.
    attempts_.push_back(why.rfind(file, 0) == 0 ? why : file + ": " + why);
  }
}

bool LazyLibrary::available() {
  std::call_once(loaded_, [this] { load(); });
  return handle_ != nullptr;
}

void* LazyLibrary::handle() {
  if (!available()) throw DeviceError(load_error_message());
  return handle_;
}

std::string LazyLibrary::load_error_message() const {
  std::string tried;
  for (const std::string& attempt : attempts_) tried += (tried.empty() ? "" : "; ") + attempt;
  return spec_.name + " (" + spec_.soname + ") could not be loaded; Strata loads it when " +
         spec_.needed_for + " first run. Tried: " + tried + ". Fix: " + spec_.install_hint +
         ", or add the folder that holds " + spec_.soname +
         " to LD_LIBRARY_PATH (Strata was built with " + spec_.name + " " + spec_.built_with +
         "). Models on the CPU need none of the CUDA libraries.";
}

void* LazyLibrary::symbol(const char* name) {
  void* lib = handle();
  dlerror();  // clear a stale error, so the one read below is dlsym's
  void* address = dlsym(lib, name);
  if (address != nullptr) return address;
  // Copied at once: the next dl* call (dlinfo below) may free dlerror's string.
  const char* reason = dlerror();
  const std::string why = reason != nullptr ? reason : "dlsym found no such symbol";
  const std::string path = loaded_path(lib);
  throw DeviceError(spec_.name + " (" + (path.empty() ? spec_.soname : path) +
                    ") has no function " + name + " (" + why + "): it is older than the " +
                    spec_.name + " " + spec_.built_with + " Strata was built with. Fix: " +
                    spec_.install_hint + ", " + spec_.built_with +
                    " or newer, or put the folder of a newer " + spec_.soname +
                    " first in LD_LIBRARY_PATH.");
}

}  // namespace strata
