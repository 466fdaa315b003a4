// mnist's command line: the flags (Abseil, defined in mnist_flags.cc), parsed and checked into
// plain values before the app does anything.
#pragma once

#include <cstdint>
#include <string>

#include "apps/common/flags.h"

namespace mnist_app {

struct Options {
  std::string model, dataset, data_dir, distribution_strategy, model_dir;
  int epochs = 0;
  int64_t batch_size = 0;
  int64_t steps_per_epoch = 0;  // 0: the whole training set each epoch
  int num_cpu_replicas = 1, num_gpus = 0;
  int elastic_min_workers = 0;  // 0: not elastic
  int64_t backup_freq = 0;      // batches between backups; 0: at each epoch end
  uint64_t seed = 0;
  int verbose = 1;
};

// Parses argv and checks every flag and their combinations: apps::FlagError naming the flag, what
// it allows and what it got. With ParseMode::kProgram, --help and friends print and exit.
Options parse_flags(int argc, char** argv, apps::ParseMode mode = apps::ParseMode::kProgram);

}  // namespace mnist_app
