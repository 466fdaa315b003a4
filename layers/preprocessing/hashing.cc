#include "layers/preprocessing/hashing.h"

#include "layers/preprocessing/hash_functions.h"

namespace strata {

Hashing::Hashing(int64_t num_bins, const HashingOptions& options)
    : Layer("hashing", options.name_), num_bins_(num_bins), options_(options) {
  if (num_bins <= 0) {
    throw ValueError("Hashing: the `num_bins` for `Hashing` cannot be `None` or non-positive "
                     "values. Received: num_bins=" + std::to_string(num_bins));
  }
  // Its output is int64 bins (Keras gives it an int64 policy): float inputs must reach the hash
  // unrounded, so nothing is cast to 16 bits under a mixed global policy.
  set_dtype_policy("int64");
}

int64_t Hashing::hash_bin(const std::string& s) const {
  // With a mask value, bin 0 is reserved (unless there is only one bin, as Keras).
  const bool masked = options_.mask_value_ && num_bins_ > 1;
  const uint64_t bins = uint64_t(masked ? num_bins_ - 1 : num_bins_);
  const uint64_t h = options_.salt_
      ? preprocessing::siphash64(options_.salt_->first, options_.salt_->second, s)
      : preprocessing::fingerprint64(s);
  return int64_t(h % bins) + (masked ? 1 : 0);
}

int64_t Hashing::bin(const std::string& token) const {
  if (options_.mask_value_ && num_bins_ > 1) {
    const auto* m = std::get_if<std::string>(&*options_.mask_value_);
    if (m == nullptr) {
      throw ValueError("Hashing '" + name() + "': the mask_value is an integer but the inputs "
                       "are strings");
    }
    if (token == *m) return 0;
  }
  return hash_bin(token);
}

int64_t Hashing::bin(int64_t value) const {
  if (options_.mask_value_ && num_bins_ > 1) {
    const auto* m = std::get_if<int64_t>(&*options_.mask_value_);
    if (m == nullptr) {
      throw ValueError("Hashing '" + name() + "': the mask_value is a string but the inputs "
                       "are numbers");
    }
    if (value == *m) return 0;
  }
  return hash_bin(std::to_string(value));  // Keras hashes integers as their decimal string
}

Tensor Hashing::hash(const std::vector<std::string>& tokens, const Shape& shape) const {
  const Shape out = shape.dims().empty() ? Shape{int64_t(tokens.size())} : shape;
  if (out.numel() != int64_t(tokens.size())) {
    throw ShapeError("Hashing '" + name() + "': " + std::to_string(tokens.size()) +
                     " tokens do not fill shape " + out.to_string());
  }
  std::vector<int64_t> bins(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) bins[i] = bin(tokens[i]);
  return Tensor::from_vector(bins, out);
}

Tensor Hashing::call(const Tensor& x, bool) {
  if (x.dtype() == DType::kBool) {
    throw DTypeError("Hashing '" + name() + "': expected integer, float or string inputs, got bool");
  }
  // Floats are truncated to int64 first, as Keras does.
  const std::vector<int64_t> values = x.to_vector<int64_t>();
  std::vector<int64_t> bins(values.size());
  for (size_t i = 0; i < values.size(); ++i) bins[i] = bin(values[i]);
  return Tensor::from_vector(bins, x.shape());
}

Json Hashing::get_config() const {
  Json c = Layer::get_config();
  c.set("dtype", "int64");  // the policy's name, written plainly as Keras 2 did
  c.set("num_bins", num_bins_);
  if (options_.salt_) {
    c.set("salt", Json(std::vector<int64_t>{int64_t(options_.salt_->first),
                                            int64_t(options_.salt_->second)}));
  } else {
    c.set("salt", Json());
  }
  if (!options_.mask_value_) {
    c.set("mask_value", Json());
  } else if (const auto* s = std::get_if<std::string>(&*options_.mask_value_)) {
    c.set("mask_value", *s);
  } else {
    c.set("mask_value", std::get<int64_t>(*options_.mask_value_));
  }
  c.set("output_mode", "int");
  c.set("sparse", false);
  return c;
}

std::shared_ptr<Layer> Hashing::from_config(const Json& c) {
  HashingOptions o;
  o.name(c.get("name", "").as_string());
  const Json mask = c.get("mask_value", Json()), salt = c.get("salt", Json());
  if (mask.is_string()) o.mask_value(mask.as_string());
  else if (!mask.is_null()) o.mask_value(mask.as_int());
  if (!salt.is_null()) {
    const std::vector<int64_t> s = salt.as_int_vector();
    if (s.size() == 1) o.salt(uint64_t(s[0]));
    else if (s.size() == 2) o.salt(uint64_t(s[0]), uint64_t(s[1]));
    else throw ValueError("Hashing: the `salt` argument can only be a tuple of size 2 integers, "
                          "or a single integer. Received: salt=" + salt.dump());
  }
  if (c.get("output_mode", "int").as_string() != "int" || c.get("sparse", false).as_bool()) {
    throw ValueError("Hashing: only output_mode=\"int\" (not sparse) is supported");
  }
  auto layer = std::make_shared<Hashing>(c.at("num_bins").as_int(), o);
  if (!c.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

}  // namespace strata
