#include "apps/ps_embedding/ps_embedding_task.h"

#include <algorithm>
#include <random>

#include "distribute/parameter_server/step_registry.h"

namespace ps_embedding {

using namespace strata;

const std::vector<std::string>& feature_vocab() {
  static const std::vector<std::string> v = {"avenger", "ironman", "batman",      "hulk",
                                             "spiderman", "kingkong", "wonder_woman"};
  return v;
}
const std::vector<std::string>& label_vocab() {
  static const std::vector<std::string> v = {"yes", "no"};
  return v;
}

data::Dataset examples(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> features, labels;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<std::string> pool = feature_vocab();
    std::shuffle(pool.begin(), pool.end(), rng);
    pool.resize(3);  // random.sample(feature_vocab, 3)
    const bool yes = std::count(pool.begin(), pool.end(), "avenger") +
                         std::count(pool.begin(), pool.end(), "batman") > 0;
    features.insert(features.end(), pool.begin(), pool.end());
    labels.push_back(yes ? "yes" : "no");
  }
  // The tutorial's preprocessing stage: strings to ids in the input pipeline.
  StringLookup feature_lookup(StringLookupOptions().vocabulary(feature_vocab()).mask_token(""));
  StringLookup label_lookup(
      StringLookupOptions().vocabulary(label_vocab()).num_oov_indices(0));
  const Tensor ids = feature_lookup.lookup(features, Shape{n, 3});
  const Tensor y = label_lookup.lookup(labels, Shape{n, 1}).cast(DType::kFloat32);
  return data::Dataset::from_tensor_slices({ids, y});
}

std::shared_ptr<Model> build_model(int64_t embedding_dim) {
  const int64_t vocab = int64_t(feature_vocab().size()) + 2;  // mask + [UNK]
  KerasTensor ids = Input({3}, DType::kInt64, "model_input");
  KerasTensor emb = Embedding(vocab, embedding_dim)(ids);
  // tf.reduce_mean(emb, axis=1): [3, dim] -> [3, 1, dim], averaged over the 3 x 1 "pixels".
  KerasTensor mean = GlobalAveragePooling2D()(Reshape({3, 1, embedding_dim})(emb));
  KerasTensor out = Dense(1, DenseOptions().activation("sigmoid").kernel_regularizer(
                                 regularizers::l2(1e-4)))(mean);
  auto model = std::make_shared<Model>(ids, out);
  model->compile(CompileOptions()
                     .optimizer(std::make_shared<optimizers::RMSprop>(0.1))
                     .loss(std::make_shared<losses::BinaryCrossentropy>()));
  return model;
}

void register_functions(int64_t examples_count) {
  distribute::register_dataset_function(
      "ps_embedding_train_data", [examples_count](const distribute::DatasetContext& ctx) {
        return examples(examples_count, 42)
            .shuffle(200, uint64_t(ctx.worker_index + 1))
            .batch(32)
            .repeat();
      });
  distribute::register_step_function("ps_embedding_step", [](distribute::StepContext& ctx) {
    const data::Element batch = ctx.next();
    Model& model = *ctx.model;
    const losses::BinaryCrossentropy loss_fn;
    Tensor pred, loss;
    const std::vector<VariablePtr> vars = model.trainable_variables();
    std::vector<Tensor> grads;
    {
      GradientTape tape;
      pred = model(batch[0], /*training=*/true);
      loss = loss_fn(batch[1], pred);
      for (const Tensor& l : model.losses()) loss = add(loss, l);  // the L2 penalty
      grads = tape.gradient(loss, vars);
    }
    model.optimizer()->apply_gradients(grads, vars);
    const Tensor predicted_no =
        greater(pred.detach(), full(Shape{}, 0.5)).cast(DType::kFloat32);  // label 1 = "no"
    const Tensor correct = reduce_sum(equal(predicted_no, batch[1]).cast(DType::kFloat32));
    const float count = float(batch[1].shape()[0]);
    return std::vector<Tensor>{loss.detach(), correct,
                               Tensor::from_vector(std::vector<float>{count}, Shape{})};
  });
}

}  // namespace ps_embedding
