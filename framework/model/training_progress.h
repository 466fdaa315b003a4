// Where fit() is, precisely enough to resume it bit-identically: the epoch, the batches done in
// it, the input pipeline's position and the global generator's state. fit() keeps a
// TrainingProgress up to date; BackupAndRestore saves it and hands a ResumePoint back to the
// next fit() (Model::resume_at), which skips to exactly that point.
#pragma once

#include <cstdint>
#include <vector>

#include "framework/core/random.h"

namespace strata {

// The input pipeline's position: the generator state just before the current pass over the data
// was made (the shuffle of tensors, or the Dataset iterator), and the batches drawn from it.
struct DataPosition {
  GeneratorState pass_rng;
  int64_t consumed = 0;
  // A Dataset's own state (Dataset::state(): shuffles' pass counts) when the current pass was
  // made, and now; empty for tensors.
  std::vector<uint64_t> pipeline_at_pass_start;
  std::vector<uint64_t> pipeline_now;
  // True when one pass spans epochs (a Dataset with steps_per_epoch): the next epoch continues
  // it instead of starting a new one.
  bool spans_epochs = false;
};

struct TrainingProgress {
  int epoch = 0;     // the current (0-based) epoch
  int64_t step = 0;  // batches finished in it
  DataPosition data;
};

// A point to restart training from: epoch `epoch` with `step` batches already done; `rng` is the
// global generator's state at that point (taken after those batches).
struct ResumePoint {
  int epoch = 0;
  int64_t step = 0;
  DataPosition data;
  GeneratorState rng;
  // Resume inside the pass `data` describes even at step 0 (a worker joining an elastic job
  // mid-epoch), rather than starting the epoch's pass afresh.
  bool mid_pass = false;
  // Batches of this epoch drawn before the resume point when that is not `step` (an elastic job
  // keeping the per-replica batch draws one batch per replica each step); -1: `step`.
  int64_t batches_in_epoch = -1;
};

}  // namespace strata
