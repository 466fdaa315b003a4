// How a Loss object turns per-sample losses into what it returns (Keras's `reduction`).
#pragma once

#include <string>

#include "framework/core/tensor.h"

namespace strata::losses {

enum class Reduction {
  kSumOverBatchSize,     // Keras's default: sum of the weighted losses / number of losses
  kSum,                  // sum of the weighted losses
  kNone,                 // the weighted per-sample losses themselves
  kMeanWithSampleWeight  // sum of the weighted losses / sum of the sample weights
};

// Keras spellings: "sum_over_batch_size" (or "mean"), "sum", "none", "mean_with_sample_weight".
// Throws ValueError listing them for anything else.
Reduction reduction_from_name(const std::string& name);
const char* reduction_name(Reduction reduction);

// Keras's reduce_weighted_values: multiplies `values` by `sample_weight` (when defined; matched
// in rank like y_true/y_pred, then broadcast) and reduces. An empty batch reduces to 0.
Tensor reduce_weighted_values(const Tensor& values, const Tensor& sample_weight,
                              Reduction reduction);

}  // namespace strata::losses
