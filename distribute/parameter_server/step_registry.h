// The step and dataset functions a ClusterCoordinator can schedule. Closures cannot travel to
// another process, but every task runs the same binary: functions are registered by name before
// the task's role is decided (main() on every task runs the same registrations), the coordinator
// sends the name, and the worker looks the function up here (TensorFlow traces a tf.function and
// ships its graph instead; a name is what a C++ binary can ship).
//
//   register_dataset_function("train_data", [](const DatasetContext& ctx) {
//     return make_data().shard(ctx.num_workers, ctx.worker_index).repeat().batch(64);
//   });
//   register_step_function("train_step", [](StepContext& ctx) {
//     data::Element batch = ctx.next();
//     ... GradientTape over ctx.model, optimizer->apply_gradients(...)
//     return std::vector<Tensor>{loss};
//   });
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "framework/core/tensor.h"
#include "framework/data/dataset.h"

namespace strata {
class Model;
}

namespace strata::distribute {

// What a step function receives on the worker running it.
struct StepContext {
  const std::vector<Tensor>& args;  // the closure's arguments
  data::Iterator* iterator;         // this worker's iterator of the closure's dataset, or null
  Model* model;                     // this worker's copy of the coordinator's model, or null
  int worker_index;
  // The iterator's next element; StateError when the closure has no dataset or it is exhausted
  // (per-worker datasets are usually repeat()ed, as in TensorFlow).
  data::Element next() const;
};
using StepFunction = std::function<std::vector<Tensor>(StepContext& context)>;

struct DatasetContext {
  int worker_index;
  int num_workers;
};
using DatasetFunction = std::function<data::Dataset(const DatasetContext& context)>;

// Registers `fn` under `name` (replacing an earlier one of that name).
void register_step_function(const std::string& name, StepFunction fn);
void register_dataset_function(const std::string& name, DatasetFunction fn);
// The function registered as `name`; ValueError naming the registered ones when there is none.
StepFunction find_step_function(const std::string& name);
DatasetFunction find_dataset_function(const std::string& name);

}  // namespace strata::distribute
