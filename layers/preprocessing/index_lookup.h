// Not for direct use (installed because the lookup layers' headers include it): the vocabulary
// logic shared by StringLookup and IntegerLookup (Keras' IndexLookup), for token type T
// (std::string or int64_t). Index layout, as Keras:
//   [mask token (index 0, when set)] [num_oov_indices OOV indices] [vocabulary ...]
// Out-of-vocabulary tokens map to the single OOV index, or with several OOV indices to
// oov_start + bucket(token) (FarmHash for strings, floormod for integers, as Keras).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/config/json.h"
#include "framework/core/error.h"

namespace strata::preprocessing {

template <typename T>
std::string token_repr(const T& t) {
  std::ostringstream s;
  if constexpr (std::is_same_v<T, std::string>) s << '"' << t << '"'; else s << t;
  return s.str();
}

template <typename T>
class IndexLookup {
 public:
  struct Options {
    std::optional<int64_t> max_tokens;
    int64_t num_oov_indices = 1;
    std::optional<T> mask_token;
    T oov_token;
    bool invert = false;
  };
  using Bucket = int64_t (*)(const T& token, int64_t num_buckets);

  IndexLookup(const std::string& layer, Options o, Bucket bucket)
      : layer_(layer), o_(std::move(o)), bucket_(bucket) {
    if (o_.max_tokens && *o_.max_tokens <= 1) {
      throw ValueError(layer_ + ": if set, `max_tokens` must be greater than 1. Received: "
                       "max_tokens=" + std::to_string(*o_.max_tokens));
    }
    if (o_.num_oov_indices < 0) {
      throw ValueError(layer_ + ": `num_oov_indices` must be greater than or equal to 0. "
                       "Received: num_oov_indices=" + std::to_string(o_.num_oov_indices));
    }
  }

  const Options& options() const { return o_; }
  bool has_static_vocabulary() const { return static_; }
  bool has_vocabulary() const { return has_vocab_; }
  int64_t oov_start() const { return o_.mask_token ? 1 : 0; }
  int64_t token_start() const { return oov_start() + o_.num_oov_indices; }
  int64_t vocabulary_size() const { return token_start() + int64_t(tokens_.size()); }

  // [mask] + [oov] * num_oov_indices + tokens (or the tokens alone).
  std::vector<T> get_vocabulary(bool include_special_tokens = true) const {
    std::vector<T> v;
    if (include_special_tokens) {
      if (o_.mask_token) v.push_back(*o_.mask_token);
      for (int64_t i = 0; i < o_.num_oov_indices; ++i) v.push_back(o_.oov_token);
    }
    v.insert(v.end(), tokens_.begin(), tokens_.end());
    return v;
  }

  // Keras' set_vocabulary: special tokens may lead the list in exactly the layout above.
  void set_vocabulary(const std::vector<T>& vocabulary) {
    if (vocabulary.empty()) {
      throw ValueError(layer_ + ": cannot set an empty vocabulary");
    }
    std::vector<T> special = get_vocabulary(true);
    special.resize(size_t(token_start()));
    std::vector<T> tokens = vocabulary;
    if (vocabulary.size() >= special.size() &&
        std::equal(special.begin(), special.end(), vocabulary.begin())) {
      tokens.erase(tokens.begin(), tokens.begin() + long(special.size()));
    }
    std::map<T, int> seen;
    std::vector<std::string> repeated;
    for (const T& t : tokens) {
      if (++seen[t] == 2) repeated.push_back(token_repr(t));
    }
    if (!repeated.empty()) {
      std::string r;
      for (const auto& s : repeated) r += (r.empty() ? "" : ", ") + s;
      throw ValueError(layer_ + ": the passed vocabulary has at least one repeated term. Please "
                       "uniquify your dataset. The repeated terms are: [" + r + "]");
    }
    if (o_.mask_token && seen.count(*o_.mask_token)) {
      throw ValueError(layer_ + ": found reserved mask token " + token_repr(*o_.mask_token) +
                       " at unexpected location in `vocabulary`. Note that passed `vocabulary` "
                       "does not need to include the OOV and mask tokens");
    }
    if (o_.invert && seen.count(o_.oov_token)) {
      throw ValueError(layer_ + ": found reserved OOV token " + token_repr(o_.oov_token) +
                       " at unexpected location in `vocabulary`. Note that passed `vocabulary` "
                       "does not need to include the OOV and mask tokens");
    }
    const int64_t size = token_start() + int64_t(tokens.size());
    if (o_.max_tokens && size > *o_.max_tokens) {
      throw ValueError(layer_ + ": attempted to set a vocabulary larger than the maximum vocab "
                       "size. Received vocabulary size is " + std::to_string(size) +
                       "; `max_tokens` is " + std::to_string(*o_.max_tokens));
    }
    set_tokens(std::move(tokens));
    static_ = true;
  }

  // Keras' adapt: counts tokens (mask and OOV tokens excluded), sorts by count then by token,
  // both descending (numpy lexsort reversed), and keeps the first max_tokens - token_start.
  void adapt(const std::vector<T>& data) {
    if (static_) {
      throw ValueError(layer_ + ": cannot adapt after setting a static vocabulary via the "
                       "`vocabulary` argument or set_vocabulary()");
    }
    std::map<T, int64_t> counts;
    for (const T& t : data) ++counts[t];
    if (o_.mask_token) counts.erase(*o_.mask_token);
    counts.erase(o_.oov_token);
    if (counts.empty()) return;  // Keras keeps the previous vocabulary
    std::vector<std::pair<T, int64_t>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : b.first < a.first;
    });
    if (o_.max_tokens) {
      const int64_t keep = std::max<int64_t>(0, *o_.max_tokens - token_start());
      if (int64_t(sorted.size()) > keep) sorted.resize(size_t(keep));
    }
    std::vector<T> tokens;
    for (auto& [t, c] : sorted) tokens.push_back(t);
    set_tokens(std::move(tokens));
  }

  // Forward: token -> index. OOV with num_oov_indices == 0 is an error, as in Keras.
  int64_t index_of(const T& token) const {
    if (o_.mask_token && token == *o_.mask_token) return 0;
    auto it = index_.find(token);
    if (it != index_.end()) return it->second;
    if (o_.num_oov_indices == 0) {
      throw ValueError(layer_ + ": when `num_oov_indices=0` all inputs should be in vocabulary, "
                       "found OOV value " + token_repr(token) + ", consider setting "
                       "`num_oov_indices=1`");
    }
    if (o_.num_oov_indices == 1) return oov_start();
    return oov_start() + bucket_(token, o_.num_oov_indices);
  }

  // Inverse: index -> token; the mask index gives the mask token, any other index outside the
  // vocabulary (OOV indices included) the OOV token.
  const T& token_of(int64_t index) const {
    if (o_.mask_token && index == 0) return *o_.mask_token;
    const int64_t k = index - token_start();
    if (k >= 0 && k < int64_t(tokens_.size())) return tokens_[size_t(k)];
    return o_.oov_token;
  }

 private:
  void set_tokens(std::vector<T> tokens) {
    tokens_ = std::move(tokens);
    index_.clear();
    for (size_t i = 0; i < tokens_.size(); ++i) index_[tokens_[i]] = token_start() + int64_t(i);
    has_vocab_ = true;
  }

  std::string layer_;
  Options o_;
  Bucket bucket_;
  std::vector<T> tokens_;
  std::unordered_map<T, int64_t> index_;
  bool static_ = false, has_vocab_ = false;
};

// The config keys StringLookup and IntegerLookup share (Keras' IndexLookup base), written into
// `c`; each layer adds its own (encoding, vocabulary_dtype, oov_method).
template <typename Options, typename Table>
void add_index_lookup_config(Json& c, const Options& o, const Table& table) {
  c.set("invert", o.invert_);
  c.set("max_tokens", o.max_tokens_ ? Json(*o.max_tokens_) : Json());
  c.set("num_oov_indices", o.num_oov_indices_);
  c.set("oov_token", o.oov_token_);
  c.set("mask_token", o.mask_token_ ? Json(*o.mask_token_) : Json());
  c.set("output_mode", o.output_mode_);
  c.set("sparse", false);
  c.set("pad_to_max_tokens", false);
  c.set("idf_weights", Json());
  c.set("vocabulary", table.has_vocabulary() ? Json(table.get_vocabulary(false)) : Json());
  c.set("vocabulary_size", table.has_vocabulary() ? Json(table.vocabulary_size()) : Json());
}

}  // namespace strata::preprocessing
