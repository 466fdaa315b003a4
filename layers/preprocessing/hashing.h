// Hashing: hashes integers or strings into num_bins bins, like keras.layers.Hashing
// (output_mode "int", int64 output). Same hashes as Keras/TensorFlow, stable across runs and
// platforms: integers are hashed as their decimal string; without a salt the hash is FarmHash
// Fingerprint64 (tf.strings.to_hash_bucket_fast), with a salt SipHash-2-4 keyed by the salt
// (to_hash_bucket_strong). With a mask_value, bin 0 is reserved for it and the other values
// hash into bins 1 .. num_bins-1.
//
//   Hashing h(3);
//   h(std::vector<std::string>{"A", "B", "C"});    // int64 [1, 0, 1], as Keras
//   h(tensor<int64_t>({1, 2, 3}));                 // int32/int64/float tensors (floats -> int64)
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "framework/model/layer.h"

namespace strata {

struct HashingOptions {
  std::optional<std::variant<int64_t, std::string>> mask_value_;
  std::optional<std::pair<uint64_t, uint64_t>> salt_;
  std::string name_;

  HashingOptions& mask_value(int64_t v) { mask_value_ = v; return *this; }
  HashingOptions& mask_value(std::string v) { mask_value_ = std::move(v); return *this; }
  HashingOptions& mask_value(const char* v) { mask_value_ = std::string(v); return *this; }
  // One integer means the key (salt, salt), as Keras.
  HashingOptions& salt(uint64_t s) { salt_ = std::make_pair(s, s); return *this; }
  HashingOptions& salt(uint64_t s0, uint64_t s1) { salt_ = std::make_pair(s0, s1); return *this; }
  HashingOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class Hashing : public Layer {
 public:
  STRATA_LAYER(Hashing)
  explicit Hashing(int64_t num_bins, const HashingOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "Hashing"; }
  Json get_config() const override;
  int64_t num_bins() const { return num_bins_; }

  using Layer::operator();
  // Strings -> int64 bins of `shape` (default [tokens.size()]).
  Tensor hash(const std::vector<std::string>& tokens, const Shape& shape = {}) const;
  // Pass a std::vector<std::string> explicitly: a braced list of two C strings would also
  // match the Tensor-vector overloads (as iterator pair).
  Tensor operator()(const std::vector<std::string>& tokens) const { return hash(tokens); }
  // The bin of one string / one integer.
  int64_t bin(const std::string& token) const;
  int64_t bin(int64_t value) const;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  int64_t hash_bin(const std::string& s) const;  // without the mask rule

  int64_t num_bins_;
  HashingOptions options_;
};

}  // namespace strata
