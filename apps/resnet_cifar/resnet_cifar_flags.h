// resnet_cifar's command line: the flags of TensorFlow's official resnet_cifar_main.py (Abseil,
// defined in resnet_cifar_flags.cc), parsed and checked into plain values before the app does
// anything.
#pragma once

#include <cstdint>
#include <string>

#include "apps/common/flags.h"

namespace resnet_cifar {

struct Options {
  std::string data_dir, data_format, model_dir, distribution_strategy, all_reduce_alg, dtype;
  bool eval_only = false, use_synthetic_data = false, skip_eval = false;
  int64_t batch_size = 0;
  int train_epochs = 0;
  int64_t train_steps = 0;  // 0: whole epochs
  int resnet_size = 0;
  int epochs_between_evals = 1;
  int64_t log_steps = 0;
  int num_cpu_replicas = 1, num_gpus = 0, num_packs = 1;
  int elastic_min_workers = 0;  // 0: not elastic
  uint64_t seed = 0;
};

// Parses argv and checks every flag and their combinations: apps::FlagError naming the flag, what
// it allows and what it got. With ParseMode::kProgram, --help and friends print and exit.
Options parse_flags(int argc, char** argv, apps::ParseMode mode = apps::ParseMode::kProgram);

}  // namespace resnet_cifar
