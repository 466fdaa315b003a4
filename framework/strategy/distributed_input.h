// What a training loop hands its strategy to make a distributed input (Strategy::distribute_input).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "framework/data/dataset.h"

namespace strata::distribute {

// Where the global batches come from: the next one, or nullopt at the end of the pass.
using BatchSource = std::function<std::optional<data::Element>()>;

struct InputOptions {
  // The full global batch size: 0 when the first batch fixes it (a dataset), > 0 when known
  // (tensor inputs), -1 when every batch is its own (train_on_batch): split as evenly as it goes.
  int64_t global_batch_size = 0;
  // Names the caller in errors ("Model.fit", "experimental_distribute_dataset").
  const char* who = "Model.fit";
  // Each batch is this worker's own part of the global batch (its pipeline was divided by file,
  // data::shard_by_file), not the whole global batch: with several workers the global batch is
  // every worker's together, agreed on each step (Strategy::agree_on_unsharded_batch).
  bool worker_batches = false;
};

}  // namespace strata::distribute
