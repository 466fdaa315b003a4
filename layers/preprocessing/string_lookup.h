// StringLookup: maps strings to integer ids through a vocabulary, like keras.layers.StringLookup
// (output_mode "int"). Index layout as Keras: the mask token (if any) at 0, then the
// num_oov_indices OOV indices, then the vocabulary.
//
// Strata tensors have no string dtype, so the lookup runs on std::vector<std::string> and gives
// an int64 Tensor; calling the layer on a Tensor throws. Use it in the input pipeline (e.g. a
// Dataset map) and put the Embedding in the model - this is how Keras' parameter-server
// tutorial model (StringLookup -> Embedding) is written in Strata:
//
//   auto lookup = std::make_shared<StringLookup>(StringLookupOptions().vocabulary(vocab));
//   Tensor ids = (*lookup)(std::vector<std::string>{"cat", "dog"});   // int64 [2]
//   Tensor y = model(ids);   // model starts with Embedding(lookup->vocabulary_size(), ...)
//
// invert=true maps ids back to strings with invert_lookup().
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "framework/model/layer.h"
#include "layers/preprocessing/index_lookup.h"

namespace strata {

struct StringLookupOptions {
  std::optional<int64_t> max_tokens_;  // includes the mask and OOV indices
  int64_t num_oov_indices_ = 1;
  std::optional<std::string> mask_token_;
  std::string oov_token_ = "[UNK]";
  std::optional<std::vector<std::string>> vocabulary_;
  bool invert_ = false;
  std::string output_mode_ = "int";  // the only mode Strata implements
  std::string name_;

  StringLookupOptions& max_tokens(int64_t n) { max_tokens_ = n; return *this; }
  StringLookupOptions& num_oov_indices(int64_t n) { num_oov_indices_ = n; return *this; }
  StringLookupOptions& mask_token(std::string t) { mask_token_ = std::move(t); return *this; }
  StringLookupOptions& oov_token(std::string t) { oov_token_ = std::move(t); return *this; }
  StringLookupOptions& vocabulary(std::vector<std::string> v) { vocabulary_ = std::move(v); return *this; }
  StringLookupOptions& invert(bool i) { invert_ = i; return *this; }
  StringLookupOptions& output_mode(std::string m) { output_mode_ = std::move(m); return *this; }
  StringLookupOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class StringLookup : public Layer {
 public:
  STRATA_LAYER(StringLookup)
  explicit StringLookup(const StringLookupOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "StringLookup"; }
  // Keras' keys. "vocabulary" holds the current vocabulary (adapted ones included: Strata has
  // no asset files), without special tokens.
  Json get_config() const override;

  // Layer's Tensor overloads are hidden here on purpose, so layer({"a", "b"}) is unambiguous;
  // through a Layer& they still reach call(), which explains the string API.
  // tokens -> int64 ids of `shape` (default [tokens.size()]).
  Tensor lookup(const std::vector<std::string>& tokens, const Shape& shape = {}) const;
  Tensor operator()(const std::vector<std::string>& tokens) const { return lookup(tokens); }
  // invert=true: int ids -> strings, row-major.
  std::vector<std::string> invert_lookup(const Tensor& ids) const;

  // Builds the vocabulary from tokens by descending frequency (ties: descending token order).
  void adapt(const std::vector<std::string>& data);
  void set_vocabulary(const std::vector<std::string>& vocabulary);
  std::vector<std::string> get_vocabulary(bool include_special_tokens = true) const;
  int64_t vocabulary_size() const;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  StringLookupOptions options_;
  preprocessing::IndexLookup<std::string> table_;
};

}  // namespace strata
