// KeyValueStore: the rendezvous store the cross-process collectives meet through (Gloo's
// connectFullMesh, NCCL's unique id). The coordination service's client is the real one
// (coordination_client.h); tests use an in-memory one (in_memory_store.h).
//
// Keys are written once by one task and read by the others: set() publishes, get() waits until
// the key exists or the timeout passes, and a timeout is a CoordinationError naming the key (and,
// where the store knows it, the tasks that have not shown up).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distribute/errors.h"

namespace strata::distribute {

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  // Publishes `value` under `key` (overwriting it).
  virtual void set(const std::string& key, const std::string& value) = 0;
  // The value of `key`, waiting until some task sets it; CoordinationError after `timeout`.
  virtual std::string get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  // The value of `key` if it is set now.
  virtual std::optional<std::string> try_get(const std::string& key) = 0;
  // Atomically adds `delta` to the integer stored under `key` (0 when unset); the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Removes `key` (nothing when unset).
  virtual void erase(const std::string& key) = 0;

  // Several keys at once (a rendezvous publishes and reads one key per peer). A store that can
  // do either in fewer round trips overrides them (the coordination service: one request each);
  // these defaults call set() / get() per key.
  virtual void set_many(const std::vector<std::pair<std::string, std::string>>& entries) {
    for (const auto& [key, value] : entries) set(key, value);
  }
  // The values of `keys`, in order, each waited for; CoordinationError naming a key still unset
  // when `timeout` (for all of them together) has passed.
  virtual std::vector<std::string> get_many(const std::vector<std::string>& keys,
                                            std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<std::string> values;
    values.reserve(keys.size());
    for (const std::string& key : keys) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      values.push_back(get(key, std::max(left, std::chrono::milliseconds(0))));
    }
    return values;
  }
};

}  // namespace strata::distribute
