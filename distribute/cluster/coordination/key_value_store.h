// KeyValueStore: the rendezvous store the cross-process collectives meet through (Gloo's
// connectFullMesh, NCCL's unique id). The coordination service's client is the real one
// (coordination_client.h); tests use an in-memory one (in_memory_store.h).
//
// Keys are written once by one task and read by the others: set() publishes, get() waits until
// the key exists or the timeout passes, and a timeout is a CoordinationError naming the key (and,
// where the store knows it, the tasks that have not shown up).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

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
};

}  // namespace strata::distribute
