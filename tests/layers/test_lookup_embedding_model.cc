// The parameter-server tutorial's model, written in Strata: string features go through
// StringLookup in the input pipeline (Strata tensors hold no strings), the ids feed an Embedding
// inside the model, and fit() learns the mapping.
#include <gtest/gtest.h>

#include <strata/strata.h>

namespace strata {
namespace {

TEST(LookupEmbeddingModel, StringFeaturesToEmbeddingTrains) {
  set_random_seed(12);
  // Label 1 for "avenger"/"thor"/"hulk", 0 for the others.
  const std::vector<std::string> positives{"avenger", "thor", "hulk"};
  const std::vector<std::string> vocabulary{"avenger", "thor", "hulk", "cat", "dog", "fish"};
  std::vector<std::string> features;
  std::vector<float> labels;
  for (int i = 0; i < 240; ++i) {
    const std::string& token = vocabulary[size_t(i * 7 % 6)];
    features.push_back(token);
    labels.push_back(std::find(positives.begin(), positives.end(), token) != positives.end() ? 1.0f : 0.0f);
  }
  features.push_back("unseen");  // an out-of-vocabulary token maps to the OOV id
  labels.push_back(0.0f);

  StringLookup lookup(StringLookupOptions().vocabulary(vocabulary).mask_token(""));
  const Tensor ids = lookup.lookup(features, {int64_t(features.size()), 1});
  EXPECT_EQ(ids.to_vector<int64_t>().back(), 1);  // mask 0, OOV 1, then the vocabulary

  auto in = Input({1}, int64, "ids");
  auto emb = std::make_shared<Embedding>(lookup.vocabulary_size(), 4);
  auto x = (*std::make_shared<Flatten>())((*emb)(in));
  auto out = (*std::make_shared<Dense>(1, "sigmoid"))(x);
  Model model(in, out, "lookup_embedding");
  model.compile(std::make_shared<optimizers::Adam>(0.05), "binary_crossentropy", {"accuracy"});
  auto ds = data::Dataset::from_tensor_slices({ids, Tensor::from_vector(labels, {int64_t(labels.size()), 1})})
                .shuffle(64, 3)
                .batch(32);
  History h = model.fit(ds, FitOptions().epochs(20).verbose(0));
  EXPECT_GT(h.history["accuracy"].back(), 0.99);
  EXPECT_EQ(model.get_layer(emb->name())->weights()[0]->name(), emb->name() + "/embeddings");
}

}  // namespace
}  // namespace strata
