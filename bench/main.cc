// strata_bench: a small dispatcher over benchmark subcommands.
#include <cstdio>
#include <cstring>
#include <exception>

#include "bench.h"

namespace {

struct Subcommand {
  const char* name;
  const char* help;
  int (*run)(int argc, char** argv);
};

const Subcommand kSubcommands[] = {
    {"ops", "fp32 peak, matmul 1024^3 and ResNet-20 CIFAR conv throughput",
     strata::bench::run_ops},
    {"train", "full training steps on CPU or GPU: samples/s, ms/step, peak memory",
     strata::bench::run_train},
    {"scale", "one worker of a multi-worker job: time to ready, 4 KB / 16 MB all-reduce, store "
     "bytes", strata::bench::run_scale},
};

int usage() {
  std::fprintf(stderr, "usage: strata_bench <subcommand> [options]\nsubcommands:\n");
  for (const Subcommand& s : kSubcommands) std::fprintf(stderr, "  %-8s %s\n", s.name, s.help);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  for (const Subcommand& s : kSubcommands) {
    if (std::strcmp(argv[1], s.name) == 0) {
      try {
        return s.run(argc - 2, argv + 2);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "strata_bench %s: %s\n", s.name, e.what());
        return 1;
      }
    }
  }
  return usage();
}
