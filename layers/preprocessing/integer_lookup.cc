#include "layers/preprocessing/integer_lookup.h"

namespace strata {

namespace {
preprocessing::IndexLookup<int64_t>::Options table_options(const IntegerLookupOptions& o) {
  if (o.output_mode_ != "int") {
    throw ValueError("IntegerLookup: output_mode \"" + o.output_mode_ + "\" is not supported; "
                     "Strata implements output_mode=\"int\" only");
  }
  return {o.max_tokens_, o.num_oov_indices_, o.mask_token_, o.oov_token_, o.invert_};
}
// Several OOV indices: Keras' default oov_method "floormod" (Python's modulo, never negative).
int64_t floormod_bucket(const int64_t& v, int64_t n) {
  const int64_t m = v % n;
  return m < 0 ? m + n : m;
}
}  // namespace

IntegerLookup::IntegerLookup(const IntegerLookupOptions& options)
    : Layer("integer_lookup", options.name_),
      options_(options),
      table_("IntegerLookup '" + name() + "'", table_options(options), &floormod_bucket) {
  if (options_.vocabulary_) table_.set_vocabulary(*options_.vocabulary_);
}

std::vector<int64_t> IntegerLookup::integer_values(const Tensor& x, const char* what) const {
  if (x.dtype() != int64 && x.dtype() != int32) {
    throw DTypeError("IntegerLookup '" + name() + "': " + what + " must be int32 or int64, got " +
                     dtype_name(x.dtype()));
  }
  return x.to_vector<int64_t>();
}

Tensor IntegerLookup::call(const Tensor& x, bool) {
  const std::vector<int64_t> in = integer_values(x, options_.invert_ ? "ids" : "inputs");
  std::vector<int64_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    out[i] = options_.invert_ ? table_.token_of(in[i]) : table_.index_of(in[i]);
  }
  return Tensor::from_vector(out, x.shape());
}

void IntegerLookup::adapt(const Tensor& data) { table_.adapt(integer_values(data, "adapt() data")); }
void IntegerLookup::set_vocabulary(const std::vector<int64_t>& v) { table_.set_vocabulary(v); }
std::vector<int64_t> IntegerLookup::get_vocabulary(bool include_special_tokens) const {
  return table_.get_vocabulary(include_special_tokens);
}
int64_t IntegerLookup::vocabulary_size() const { return table_.vocabulary_size(); }

Json IntegerLookup::get_config() const {
  Json c = Layer::get_config();
  preprocessing::add_index_lookup_config(c, options_, table_);
  c.set("vocabulary_dtype", "int64");
  c.set("oov_method", "floormod");
  return c;
}

std::shared_ptr<Layer> IntegerLookup::from_config(const Json& c) {
  IntegerLookupOptions o;
  o.name(c.get("name", "").as_string())
      .num_oov_indices(c.get("num_oov_indices", 1).as_int())
      .oov_token(c.get("oov_token", -1).as_int())
      .invert(c.get("invert", false).as_bool())
      .output_mode(c.get("output_mode", "int").as_string());
  if (!c.get("max_tokens", Json()).is_null()) o.max_tokens(c.at("max_tokens").as_int());
  if (!c.get("mask_token", Json()).is_null()) o.mask_token(c.at("mask_token").as_int());
  if (!c.get("vocabulary", Json()).is_null()) o.vocabulary(c.at("vocabulary").as_int_vector());
  if (c.get("sparse", false).as_bool() || c.get("pad_to_max_tokens", false).as_bool()) {
    throw ValueError("IntegerLookup: sparse and pad_to_max_tokens are not supported");
  }
  if (c.get("oov_method", "floormod").as_string() != "floormod") {
    throw ValueError("IntegerLookup: only oov_method=\"floormod\" is supported, got \"" +
                     c.at("oov_method").as_string() + "\"");
  }
  auto layer = std::make_shared<IntegerLookup>(o);
  if (!c.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

}  // namespace strata
