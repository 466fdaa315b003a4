// Internal: GlooStore, a gloo::rendezvous::Store (what GlooCommunicator's rendezvous meets
// through) over Strata's KeyValueStore (the coordination service, or InMemoryStore in tests). Not
// installed: it includes Gloo's headers, which Strata's public headers never do.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "distribute/cluster/coordination/key_value_store.h"

namespace strata::distribute {

class GlooStore final : public gloo::rendezvous::Store {
 public:
  // Keys become "<prefix>/<key>": one prefix per rendezvous generation, so a re-formed group
  // never reads a dead generation's addresses. Gloo's own get() has no timeout argument: it
  // waits up to `timeout`, as wait() does.
  GlooStore(KeyValueStore& store, std::string prefix, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  // get() waiting at most `timeout` (CoordinationError naming the key after it). The
  // rendezvous (GlooCommunicator) reads each key once this way; wait() serves only Gloo's
  // Store interface, which nothing here calls.
  std::vector<char> get_within(const std::string& key, std::chrono::milliseconds timeout);
  // Several keys in one request each way where the store can (KeyValueStore::set_many /
  // get_many): a rendezvous publishes and reads one key per peer.
  void set_many(const std::vector<std::pair<std::string, std::vector<char>>>& entries);
  std::vector<std::vector<char>> get_many_within(const std::vector<std::string>& keys,
                                                 std::chrono::milliseconds timeout);
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  // What get() returned for `key` (Gloo's un-prefixed name), if it was read: the peers'
  // published addresses, which name the rank behind an address in Gloo's errors.
  std::optional<std::vector<char>> fetched(const std::string& key) const;
  // Whether `key` is set in the store now (no waiting).
  bool is_set(const std::string& key);
  std::string full_key(const std::string& key) const { return prefix_ + "/" + key; }

 private:
  KeyValueStore& store_;
  const std::string prefix_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<char>> fetched_;
};

}  // namespace strata::distribute
