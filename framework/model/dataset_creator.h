// DatasetCreator: TensorFlow's tf.keras.utils.experimental.DatasetCreator, the input of fit /
// evaluate under ParameterServerStrategy. A C++ closure cannot travel to a worker process, so it
// names a dataset function registered on every task (distribute/parameter_server/step_registry.h,
// register_dataset_function); each worker builds its own dataset from it.
//
//   register_dataset_function("train_data", [](const DatasetContext& ctx) {
//     return make_data().shard(ctx.num_workers, ctx.worker_index).repeat().batch(64);
//   });
//   model->fit(DatasetCreator("train_data"), FitOptions().epochs(3).steps_per_epoch(100));
//
// Without a strategy that trains remotely it is a ValueError saying so.
#pragma once

#include <string>
#include <utility>

namespace strata {

class DatasetCreator {
 public:
  explicit DatasetCreator(std::string function) : function_(std::move(function)) {}
  // The registered dataset function's name.
  const std::string& function() const { return function_; }

 private:
  std::string function_;
};

}  // namespace strata
