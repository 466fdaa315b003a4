// The tutorial's task, shared by every role of apps/ps_embedding: the data (StringLookup in the
// input pipeline), the model (a sharded Embedding, mean over the three features, Dense sigmoid,
// RMSprop) and the step and dataset functions every task registers by name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <strata/strata.h>

namespace ps_embedding {

// The tutorial's vocabularies; StringLookup with a mask token, as the tutorial's, gives the
// table 9 rows (mask, [UNK], 7 words): shards of 5 and 4 rows over two ps tasks.
const std::vector<std::string>& feature_vocab();
const std::vector<std::string>& label_vocab();

// `n` examples of three distinct features each, as ids through the tutorial's StringLookups,
// and labels (yes = 0, no = 1 through the label lookup, as a float [n, 1] column). The tutorial
// draws labels at random, so its accuracy stays at chance; here an example is "yes" when it
// names "avenger" or "batman", so training has something to learn. Deterministic in `seed`:
// every task makes the same examples.
strata::data::Dataset examples(int64_t n, uint32_t seed);

// Input(3 ids) -> Embedding(9, dim) -> mean over the features -> Dense(1, sigmoid, L2 1e-4),
// compiled with RMSprop(0.1) and binary cross-entropy.
std::shared_ptr<strata::Model> build_model(int64_t embedding_dim);

// Registers "ps_embedding_train_data" (shuffled, batched 32, repeated) and "ps_embedding_step"
// (one RMSprop step; returns the loss, the correct predictions and the batch size).
void register_functions(int64_t examples_count);

}  // namespace ps_embedding
