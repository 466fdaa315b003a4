#include "framework/memory/gpu_memory_settings.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "framework/core/error.h"

namespace strata::gpu {
namespace {

struct Entry {
  MemorySettings settings;
  bool frozen = false;
};

struct Table {
  std::mutex mutex;
  std::map<int, Entry> entries;  // GPUs whose settings were set or frozen
};

Table& table() {
  static Table* t = new Table;  // never destroyed: allocators may be created during teardown
  return *t;
}

// The entry of `index`, created with the defaults (lock held).
Entry& entry(Table& t, int index) {
  auto it = t.entries.find(index);
  if (it != t.entries.end()) return it->second;
  Entry e;
  e.settings.memory_growth = default_memory_growth();
  return t.entries.emplace(index, e).first->second;
}

Entry& unfrozen_entry(Table& t, int index, const char* caller) {
  Entry& e = entry(t, index);
  if (e.frozen) {
    const std::string device = "/gpu:" + std::to_string(index);
    throw StateError(std::string(caller) + "(" + device +
                     "): Physical devices cannot be modified after being initialized: " + device +
                     "'s memory allocator was created by its first allocation. Call it before "
                     "creating any tensor on " + device + " (e.g. at the start of main)");
  }
  return e;
}

}  // namespace

std::optional<bool> parse_allow_growth(const char* name, const char* value) {
  if (value == nullptr) return std::nullopt;
  std::string v = value;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "true") return true;
  if (v == "false") return false;
  throw ValueError(std::string(name) + "='" + value +
                   "' is neither true nor false; set it to true (GPU memory on demand) or false "
                   "(reserve it all at first use), or unset it");
}

bool default_memory_growth() {
  // A failed parse throws out of the initialiser, so the next call reports it again.
  static const bool growth = [] {
    if (auto v = parse_allow_growth("STRATA_GPU_ALLOW_GROWTH",
                                    std::getenv("STRATA_GPU_ALLOW_GROWTH"))) {
      return *v;
    }
    if (auto v = parse_allow_growth("TF_FORCE_GPU_ALLOW_GROWTH",
                                    std::getenv("TF_FORCE_GPU_ALLOW_GROWTH"))) {
      return *v;
    }
    return true;
  }();
  return growth;
}

MemorySettings memory_settings(int index) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return entry(t, index).settings;
}

void set_memory_growth(int index, bool enable, const char* caller) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  unfrozen_entry(t, index, caller).settings.memory_growth = enable;
}

void set_memory_limit(int index, size_t bytes, const char* caller) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  unfrozen_entry(t, index, caller).settings.memory_limit = bytes;
}

MemorySettings freeze_memory_settings(int index) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  Entry& e = entry(t, index);
  e.frozen = true;
  return e.settings;
}

bool memory_settings_frozen(int index) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(index);
  return it != t.entries.end() && it->second.frozen;
}

}  // namespace strata::gpu
