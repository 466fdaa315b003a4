// IntegerLookup: maps integer tokens (int32/int64 tensors) to int64 ids through a vocabulary,
// like keras.layers.IntegerLookup (output_mode "int"). Index layout as Keras: the mask token
// (if any) at 0, then the num_oov_indices OOV indices (several: token floormod n), then the
// vocabulary. invert=true maps ids back to tokens (OOV ids give oov_token, -1 by default).
//
//   IntegerLookup lookup(IntegerLookupOptions().vocabulary({12, 36, 1138, 42}));
//   Tensor ids = lookup(tensor<int64_t>({12, 1138, 42, 7}));   // [1, 3, 4, 0]
#pragma once

#include <optional>
#include <vector>

#include "framework/model/layer.h"
#include "layers/preprocessing/index_lookup.h"

namespace strata {

struct IntegerLookupOptions {
  std::optional<int64_t> max_tokens_;  // includes the mask and OOV indices
  int64_t num_oov_indices_ = 1;
  std::optional<int64_t> mask_token_;
  int64_t oov_token_ = -1;
  std::optional<std::vector<int64_t>> vocabulary_;
  bool invert_ = false;
  std::string output_mode_ = "int";  // the only mode Strata implements
  std::string name_;

  IntegerLookupOptions& max_tokens(int64_t n) { max_tokens_ = n; return *this; }
  IntegerLookupOptions& num_oov_indices(int64_t n) { num_oov_indices_ = n; return *this; }
  IntegerLookupOptions& mask_token(int64_t t) { mask_token_ = t; return *this; }
  IntegerLookupOptions& oov_token(int64_t t) { oov_token_ = t; return *this; }
  IntegerLookupOptions& vocabulary(std::vector<int64_t> v) { vocabulary_ = std::move(v); return *this; }
  IntegerLookupOptions& invert(bool i) { invert_ = i; return *this; }
  IntegerLookupOptions& output_mode(std::string m) { output_mode_ = std::move(m); return *this; }
  IntegerLookupOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class IntegerLookup : public Layer {
 public:
  STRATA_LAYER(IntegerLookup)
  explicit IntegerLookup(const IntegerLookupOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "IntegerLookup"; }
  // Keras' keys; "vocabulary" holds the current vocabulary (adapted ones included).
  Json get_config() const override;

  // Builds the vocabulary from the tokens of `data` (any shape, integer dtype) by descending
  // frequency (ties: descending token).
  void adapt(const Tensor& data);
  void set_vocabulary(const std::vector<int64_t>& vocabulary);
  std::vector<int64_t> get_vocabulary(bool include_special_tokens = true) const;
  int64_t vocabulary_size() const;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::vector<int64_t> integer_values(const Tensor& x, const char* what) const;

  IntegerLookupOptions options_;
  preprocessing::IndexLookup<int64_t> table_;
};

}  // namespace strata
