#include "layers/preprocessing/string_lookup.h"

#include "layers/preprocessing/hash_functions.h"

namespace strata {

namespace {
preprocessing::IndexLookup<std::string>::Options table_options(const StringLookupOptions& o) {
  if (o.output_mode_ != "int") {
    throw ValueError("StringLookup: output_mode \"" + o.output_mode_ + "\" is not supported; "
                     "Strata implements output_mode=\"int\" only");
  }
  return {o.max_tokens_, o.num_oov_indices_, o.mask_token_, o.oov_token_, o.invert_};
}
// Several OOV indices: Keras buckets strings with FarmHash (tf.strings.to_hash_bucket_fast).
int64_t string_bucket(const std::string& s, int64_t n) {
  return int64_t(preprocessing::fingerprint64(s) % uint64_t(n));
}
}  // namespace

StringLookup::StringLookup(const StringLookupOptions& options)
    : Layer("string_lookup", options.name_),
      options_(options),
      table_("StringLookup '" + name() + "'", table_options(options), &string_bucket) {
  if (options_.vocabulary_) table_.set_vocabulary(*options_.vocabulary_);
}

Tensor StringLookup::call(const Tensor&, bool) {
  throw ValueError("StringLookup '" + name() + "': Strata tensors cannot hold strings; call the "
                   "layer on a std::vector<std::string> (lookup(tokens) or layer(tokens), "
                   "typically in the input pipeline, e.g. a Dataset map) and feed the int64 ids "
                   "to the model" +
                   std::string(options_.invert_ ? "; with invert=true use invert_lookup(ids)" : ""));
}

Tensor StringLookup::lookup(const std::vector<std::string>& tokens, const Shape& shape) const {
  if (options_.invert_) {
    throw ValueError("StringLookup '" + name() + "' has invert=true: it maps ids to strings, "
                     "use invert_lookup(ids)");
  }
  const Shape out = shape.rank() == 0 && shape.dims().empty() ? Shape{int64_t(tokens.size())} : shape;
  if (out.numel() != int64_t(tokens.size())) {
    throw ShapeError("StringLookup '" + name() + "': " + std::to_string(tokens.size()) +
                     " tokens do not fill shape " + out.to_string());
  }
  std::vector<int64_t> ids(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) ids[i] = table_.index_of(tokens[i]);
  return Tensor::from_vector(ids, out);
}

std::vector<std::string> StringLookup::invert_lookup(const Tensor& ids) const {
  if (!options_.invert_) {
    throw ValueError("StringLookup '" + name() + "': invert_lookup() needs a layer built with "
                     "invert=true");
  }
  if (!is_integral(ids.dtype())) {
    throw DTypeError("StringLookup '" + name() + "': invert_lookup() expects integer ids, got " +
                     dtype_name(ids.dtype()));
  }
  std::vector<std::string> out;
  for (int64_t id : ids.to_vector<int64_t>()) out.push_back(table_.token_of(id));
  return out;
}

void StringLookup::adapt(const std::vector<std::string>& data) { table_.adapt(data); }
void StringLookup::set_vocabulary(const std::vector<std::string>& v) { table_.set_vocabulary(v); }
std::vector<std::string> StringLookup::get_vocabulary(bool include_special_tokens) const {
  return table_.get_vocabulary(include_special_tokens);
}
int64_t StringLookup::vocabulary_size() const { return table_.vocabulary_size(); }

Json StringLookup::get_config() const {
  Json c = Layer::get_config();
  preprocessing::add_index_lookup_config(c, options_, table_);
  c.set("encoding", "utf-8");
  return c;
}

std::shared_ptr<Layer> StringLookup::from_config(const Json& c) {
  StringLookupOptions o;
  o.name(c.get("name", "").as_string())
      .num_oov_indices(c.get("num_oov_indices", 1).as_int())
      .oov_token(c.get("oov_token", "[UNK]").as_string())
      .invert(c.get("invert", false).as_bool())
      .output_mode(c.get("output_mode", "int").as_string());
  if (!c.get("max_tokens", Json()).is_null()) o.max_tokens(c.at("max_tokens").as_int());
  if (!c.get("mask_token", Json()).is_null()) o.mask_token(c.at("mask_token").as_string());
  if (!c.get("vocabulary", Json()).is_null()) o.vocabulary(c.at("vocabulary").as_string_vector());
  if (c.get("sparse", false).as_bool() || c.get("pad_to_max_tokens", false).as_bool()) {
    throw ValueError("StringLookup: sparse and pad_to_max_tokens are not supported");
  }
  auto layer = std::make_shared<StringLookup>(o);
  if (!c.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

}  // namespace strata
