#include "layers/embedding.h"

#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"
#include "layers/layer_utils.h"

namespace strata {

using namespace layer_utils;

Embedding::Embedding(int64_t input_dim, int64_t output_dim, const EmbeddingOptions& options)
    : Layer("embedding", options.name_),
      input_dim_(input_dim),
      output_dim_(output_dim),
      options_(options) {
  if (input_dim <= 0 || output_dim <= 0) {
    throw ValueError("Embedding: input_dim and output_dim must be positive integers, got input_dim=" +
                     std::to_string(input_dim) + ", output_dim=" + std::to_string(output_dim));
  }
  if (!options_.embeddings_initializer_) {
    options_.embeddings_initializer_ = initializers::random_uniform(-0.05, 0.05);
  }
}

void Embedding::build(const Shape&) {
  embeddings_ = add_weight("embeddings", Shape{input_dim_, output_dim_},
                           {.initializer = options_.embeddings_initializer_,
                            .regularizer = options_.embeddings_regularizer_});
}

Tensor Embedding::call(const Tensor& x, bool) {
  const bool is_int = x.dtype() == DType::kInt32 || x.dtype() == DType::kInt64;
  // Functional models feed float placeholders, and Keras casts float ids too.
  const Tensor ids = is_int ? x : cast(x, DType::kInt64);
  try {
    // The table serves the rows (Variable::gather): a sharded or remote one only those touched.
    return embeddings_->gather(ids);
  } catch (const IndexError& e) {
    throw IndexError(describe(*this) + " (input_dim=" + std::to_string(input_dim_) + "): " + e.what());
  }
}

Json Embedding::get_config() const {
  Json c = Layer::get_config();
  c.set("input_dim", input_dim_);
  c.set("output_dim", output_dim_);
  c.set("embeddings_initializer", options_.embeddings_initializer_.to_json());
  c.set("embeddings_regularizer", to_json_or_null(options_.embeddings_regularizer_));
  c.set("activity_regularizer", Json());
  c.set("embeddings_constraint", Json());
  c.set("mask_zero", options_.mask_zero_);
  return c;
}

std::shared_ptr<Layer> Embedding::from_config(const Json& c) {
  EmbeddingOptions o;
  o.name(c.get("name", "").as_string())
      .mask_zero(c.get("mask_zero", false).as_bool())
      .embeddings_initializer(initializer_from(c, "embeddings_initializer", {}))
      .embeddings_regularizer(regularizer_from(c, "embeddings_regularizer"));
  return finish_from_config(
      std::make_shared<Embedding>(c.at("input_dim").as_int(), c.at("output_dim").as_int(), o), c);
}

}  // namespace strata
