#include "distribute/cluster/coordination/folder_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

namespace strata::distribute {

FolderStore::FolderStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::filesystem::path FolderStore::path(const std::string& key) const {
  std::string name;
  for (char c : key) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      name += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      name += hex;
    }
  }
  return dir_ / name;
}

void FolderStore::set(const std::string& key, const std::string& value) {
  const std::string tmp = path(key).string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << value;
    if (!out.flush()) throw CoordinationError("FolderStore: cannot write '" + tmp + "'");
  }
  std::filesystem::rename(tmp, path(key));
}

std::string FolderStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto v = try_get(key)) return *v;
    if (std::chrono::steady_clock::now() > deadline) {
      throw CoordinationError("FolderStore " + dir_.string() + ": key '" + key +
                              "' was not set within " + std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::optional<std::string> FolderStore::try_get(const std::string& key) {
  std::ifstream in(path(key), std::ios::binary);
  if (!in) return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int64_t FolderStore::add(const std::string& key, int64_t delta) {
  const int fd = ::open((dir_ / "add.lock").c_str(), O_CREAT | O_RDWR, 0644);
  if (fd < 0) throw CoordinationError("FolderStore: cannot open the lock in " + dir_.string());
  ::flock(fd, LOCK_EX);
  int64_t now = delta;
  try {
    now += std::stoll(try_get(key).value_or("0"));
    set(key, std::to_string(now));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);  // releases the lock
  return now;
}

void FolderStore::erase(const std::string& key) { std::filesystem::remove(path(key)); }

}  // namespace strata::distribute
