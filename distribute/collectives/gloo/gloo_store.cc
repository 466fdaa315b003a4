#include "distribute/collectives/gloo/gloo_store.h"

#include <algorithm>
#include <utility>

namespace strata::distribute {
namespace {

// Values travel hex-encoded: Gloo's are raw sockaddr bytes, and the coordination service's
// values are strings that need not carry arbitrary bytes (protobuf `string` must be UTF-8).
std::string to_hex(const std::vector<char>& data) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(data.size() * 2);
  for (char c : data) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::vector<char> from_hex(const std::string& key, const std::string& text) {
  std::vector<char> out(text.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      throw CoordinationError("Gloo rendezvous: the value of key '" + key +
                              "' is not what a GlooCommunicator publishes (not hex); is another "
                              "job using the same store prefix?");
    }
    out[i] = char(hi * 16 + lo);
  }
  if (text.size() % 2 != 0) {
    throw CoordinationError("Gloo rendezvous: the value of key '" + key + "' is truncated");
  }
  return out;
}

}  // namespace

GlooStore::GlooStore(KeyValueStore& store, std::string prefix, std::chrono::milliseconds timeout)
    : store_(store), prefix_(std::move(prefix)), timeout_(timeout) {}

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  store_.set(full_key(key), to_hex(data));
}

std::vector<char> GlooStore::get(const std::string& key) { return get_within(key, timeout_); }

std::vector<char> GlooStore::get_within(const std::string& key, std::chrono::milliseconds timeout) {
  std::vector<char> value = from_hex(full_key(key), store_.get(full_key(key), timeout));
  std::lock_guard<std::mutex> lock(mutex_);
  fetched_[key] = value;
  return value;
}

void GlooStore::set_many(const std::vector<std::pair<std::string, std::vector<char>>>& entries) {
  std::vector<std::pair<std::string, std::string>> full;
  full.reserve(entries.size());
  for (const auto& [key, data] : entries) full.emplace_back(full_key(key), to_hex(data));
  store_.set_many(full);
}

std::vector<std::vector<char>> GlooStore::get_many_within(const std::vector<std::string>& keys,
                                                          std::chrono::milliseconds timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const std::string& key : keys) full.push_back(full_key(key));
  const std::vector<std::string> texts = store_.get_many(full, timeout);
  std::vector<std::vector<char>> values;
  values.reserve(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) values.push_back(from_hex(full[k], texts[k]));
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t k = 0; k < keys.size(); ++k) fetched_[keys[k]] = values[k];
  return values;
}

void GlooStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void GlooStore::wait(const std::vector<std::string>& keys,
                     const std::chrono::milliseconds& timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const std::string& key : keys) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    store_.get(full_key(key), std::max(left, std::chrono::milliseconds(0)));
  }
}

std::optional<std::vector<char>> GlooStore::fetched(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = fetched_.find(key);
  if (it == fetched_.end()) return std::nullopt;
  return it->second;
}

bool GlooStore::is_set(const std::string& key) { return store_.try_get(full_key(key)).has_value(); }

}  // namespace strata::distribute
