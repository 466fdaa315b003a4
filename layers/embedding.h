// Embedding: integer ids [batch, ...] -> rows of "embeddings" [input_dim, output_dim], like
// keras.layers.Embedding. Ids outside [0, input_dim) throw IndexError (embedding_lookup).
// Float ids are cast to int64 first, as Keras casts non-integer inputs. mask_zero is accepted
// and saved in the config, but Strata has no masks: nothing downstream is masked.
//
//   auto emb = std::make_shared<Embedding>(10000, 64);
#pragma once

#include "framework/model/layer.h"

namespace strata {

struct EmbeddingOptions {
  Initializer embeddings_initializer_;  // RandomUniform(-0.05, 0.05), Keras' "uniform"
  Regularizer embeddings_regularizer_;
  bool mask_zero_ = false;
  std::string name_;

  EmbeddingOptions& embeddings_initializer(Initializer i) { embeddings_initializer_ = std::move(i); return *this; }
  EmbeddingOptions& embeddings_regularizer(Regularizer r) { embeddings_regularizer_ = std::move(r); return *this; }
  EmbeddingOptions& mask_zero(bool m) { mask_zero_ = m; return *this; }
  EmbeddingOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class Embedding : public Layer {
 public:
  STRATA_LAYER(Embedding)
  Embedding(int64_t input_dim, int64_t output_dim, const EmbeddingOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "Embedding"; }
  Json get_config() const override;

  int64_t input_dim() const { return input_dim_; }
  int64_t output_dim() const { return output_dim_; }
  const VariablePtr& embeddings() const { return embeddings_; }

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  int64_t input_dim_, output_dim_;
  EmbeddingOptions options_;
  VariablePtr embeddings_;
};

}  // namespace strata
