// FolderStore: a KeyValueStore in a folder that several processes share (one machine, or a
// shared file system), one file per key — Gloo's FileStore idea. For tests and benchmarks that
// run ranks as processes without a coordination service; jobs use the service.
#pragma once

#include <filesystem>

#include "distribute/cluster/coordination/key_value_store.h"

namespace strata::distribute {

class FolderStore final : public KeyValueStore {
 public:
  explicit FolderStore(std::filesystem::path dir);
  // Written to a temporary file renamed into place: readers never see a partial value.
  void set(const std::string& key, const std::string& value) override;
  // Polls every few milliseconds; CoordinationError naming the key after `timeout`.
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::optional<std::string> try_get(const std::string& key) override;
  // Under an flock of the folder, so concurrent adds from several processes all count.
  int64_t add(const std::string& key, int64_t delta) override;
  void erase(const std::string& key) override;

 private:
  // A key's file: the key with every byte but [A-Za-z0-9] hex-escaped ("a/b" -> "a%2Fb"), so
  // distinct keys never share a file.
  std::filesystem::path path(const std::string& key) const;

  std::filesystem::path dir_;
};

}  // namespace strata::distribute
