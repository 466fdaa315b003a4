// InMemoryStore: a KeyValueStore shared by threads of one process — what tests of the collectives
// use in place of the coordination service.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>

#include "distribute/cluster/coordination/key_value_store.h"

namespace strata::distribute {

class InMemoryStore final : public KeyValueStore {
 public:
  void set(const std::string& key, const std::string& value) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      values_[key] = value;
    }
    cv_.notify_all();
  }
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return values_.count(key) > 0; })) {
      throw CoordinationError("key '" + key + "' was not set within " +
                              std::to_string(timeout.count()) + " ms");
    }
    return values_[key];
  }
  std::optional<std::string> try_get(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  int64_t add(const std::string& key, int64_t delta) override {
    int64_t now;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = values_.find(key);
      now = (it == values_.end() ? 0 : std::stoll(it->second)) + delta;
      values_[key] = std::to_string(now);
    }
    cv_.notify_all();
    return now;
  }
  void erase(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    values_.erase(key);
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::string> values_;
};

}  // namespace strata::distribute
