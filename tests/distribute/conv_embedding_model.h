// The model the variable-seam tests train through their strategies (store, remote, sharded
// variables): a Conv2D branch and an Embedding(kVocab, 4) branch into Dense(3), compiled with
// test_optimizer(name), sparse categorical cross-entropy from logits and accuracy; and its data
// of kSamples samples in batches of kBatch whose ids touch only the table's first kUsedIds rows,
// four rows a batch, other rows in the next batch (a row touched in one step is untouched in the
// next, where SGD momentum's sparse update differs from a dense one).
#pragma once

#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {

inline constexpr int64_t kVocab = 50, kUsedIds = 10, kSamples = 32, kBatch = 8;

inline std::shared_ptr<Model> conv_embedding_model(const std::string& optimizer) {
  set_random_seed(99);
  KerasTensor image = Input({6, 6, 1});
  KerasTensor ids = Input({3}, DType::kInt64);
  KerasTensor a = Flatten()(Conv2D(2, 3)(image));
  KerasTensor b = Flatten()(Embedding(kVocab, 4)(ids));
  KerasTensor out = Dense(3)(Concatenate()(std::vector<KerasTensor>{a, b}));
  auto model = std::make_shared<Model>(std::vector<KerasTensor>{image, ids},
                                       std::vector<KerasTensor>{out});
  model->compile(CompileOptions()
                     .optimizer(test_optimizer(optimizer))
                     .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(true))
                     .metrics({"accuracy"}));
  return model;
}

// `ids` (kSamples x 3 table rows) with the classifier data's images and labels, batched.
inline data::Dataset conv_embedding_data(const std::vector<int64_t>& ids) {
  const ClassifierData d = classifier_data(kSamples);
  return data::Dataset::from_tensor_slices(
             {d.x, Tensor::from_vector(ids, Shape{kSamples, 3}), d.y})
      .batch(kBatch);
}

inline data::Dataset conv_embedding_data() {
  std::vector<int64_t> ids(size_t(kSamples * 3));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int64_t((i / 6) % kUsedIds);
  return conv_embedding_data(ids);
}

}  // namespace strata::testing
