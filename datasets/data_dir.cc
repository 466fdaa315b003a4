#include "datasets/data_dir.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "framework/core/error.h"

namespace strata::data {
namespace fs = std::filesystem;
namespace {

std::string home_dir() {
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "";
}

std::string describe(const FileAlternatives& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? " or " : "") + names[i];
  return s;
}

}  // namespace

std::vector<std::string> dataset_search_dirs(const std::string& name,
                                             const std::string& explicit_dir) {
  if (!explicit_dir.empty()) return {explicit_dir};
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("STRATA_DATA_DIR"); env && *env) {
    dirs.push_back((fs::path(env) / name).string());
  }
  if (std::string home = home_dir(); !home.empty()) {
    dirs.push_back((fs::path(home) / ".strata" / "datasets" / name).string());
  }
  return dirs;
}

std::string find_file(const std::string& dir, const FileAlternatives& names) {
  std::error_code ec;
  for (const std::string& n : names) {
    const fs::path p = fs::path(dir) / n;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

std::string locate_dataset(const std::string& name, const std::string& explicit_dir,
                           const std::vector<FileAlternatives>& required,
                           const std::vector<std::string>& subdirs) {
  std::string looked;
  for (const std::string& base : dataset_search_dirs(name, explicit_dir)) {
    for (const std::string& sub : subdirs) {
      const std::string dir = sub.empty() ? base : (fs::path(base) / sub).string();
      std::string missing;
      for (const FileAlternatives& f : required) {
        if (find_file(dir, f).empty()) missing = describe(f);
        if (!missing.empty()) break;
      }
      if (missing.empty()) return dir;
      std::error_code ec;
      looked += "\n  " + dir + (fs::is_directory(dir, ec) ? " (lacks " + missing + ")"
                                                          : " (no such directory)");
    }
  }
  std::string needed;
  for (const FileAlternatives& f : required) needed += "\n  " + describe(f);
  throw IOError(name + ": data set not found. Looked in:" + looked + "\nfor these files:" +
                needed + "\nFetch it with: scripts/get_datasets " + name +
                (explicit_dir.empty() ? " (or set STRATA_DATA_DIR, or pass a directory)" : ""));
}

}  // namespace strata::data
