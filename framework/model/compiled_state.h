// Internal: what compile() set up: optimizer, losses, metrics (built on the first batch, when
// the shapes that decide what "accuracy" means are known), and the loss tracker.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "framework/losses/loss.h"
#include "framework/metrics/mean.h"
#include "framework/metrics/metric.h"
#include "framework/model/training_args.h"
#include "framework/optimizers/optimizer.h"

namespace strata {

struct CompiledState {
  std::shared_ptr<optimizers::Optimizer> optimizer;
  std::vector<std::shared_ptr<losses::Loss>> losses;  // one per output
  std::vector<std::string> loss_names;
  std::vector<double> loss_weights;                    // one per output
  std::vector<MetricArg> metric_args;
  int steps_per_execution = 1;
  int64_t pss_evaluation_shards = 0;   // CompileOptions::pss_evaluation_shards_ (-1: "auto")

  bool metrics_built = false;
  std::shared_ptr<metrics::Mean> loss_tracker;
  // metrics[o] are output o's metrics; names already prefixed for multi-output models.
  std::vector<std::vector<std::shared_ptr<metrics::Metric>>> metrics;
  std::vector<std::string> metric_names;  // flat, display order
};

}  // namespace strata
