// `strata_bench scale`: one worker of a MultiWorkerMirroredStrategy job (strata-launch starts N;
// bench/scale_compare.sh runs N = 2 .. 128 beside PyTorch's gloo), measuring what grows with the
// number of workers rather than with the model:
//   ready      seconds from STRATA_SCALE_T0 (the launch, in seconds since the epoch; else this
//              process's start) until the strategy is constructed: registration with the
//              coordination service, the Gloo rendezvous, the first barrier. Every worker
//              prints its own; the job's is the slowest.
//   small      4 KB all-reduce latency, microseconds (median of --small_reps)
//   large      16 MB all-reduce, milliseconds (median of --large_reps) and bus bandwidth
//              (nccl-tests' busbw: bytes x 2 (N-1) / N / time)
//   store      bytes of keys and values through the coordination service (worker 0 hosts it):
//              after the rendezvous, and at the end
// Worker 0 prints "SCALE <N> ready <s> small_us <us> large_ms <ms> busbw_gbs <GB/s>
// store_bytes <ready> <end>"; every worker prints "SCALE_READY <worker> <ready s> <started s>",
// started being the seconds from the launch to main() (process start and library loading).
#include <sys/time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "apps/common/flags.h"
#include "bench.h"
#include "step_timer.h"
#include "distribute/cluster/coordination/coordination_service.h"
#include "framework/strategy/replica_context.h"

namespace strata::bench {
using RepsFlag = apps::Ranged<int, 1, 100000>;
}  // namespace strata::bench

ABSL_FLAG(strata::bench::RepsFlag, small_reps, 20, "Timed 4 KB all-reduces (the median is printed).");
ABSL_FLAG(strata::bench::RepsFlag, large_reps, 3, "Timed 16 MB all-reduces (the median is printed).");

namespace strata::bench {
namespace {

double now_s() {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  return double(tv.tv_sec) + double(tv.tv_usec) / 1e6;
}

// Times `reps` all-reduces (sums) of `bytes` on this worker's one replica after `warmup`
// untimed ones; seconds per op, the median.
double time_all_reduce(distribute::Strategy& strategy, int64_t bytes, int warmup, int reps) {
  StepTimes times;
  strategy.run_replicas([&](int) {
    distribute::ReplicaContext* context = distribute::current_replica_context();
    Tensor t = ones({bytes / 4});
    for (int i = 0; i < warmup; ++i) context->all_reduce(t, ReduceOp::kSum);
    for (int i = 0; i < reps; ++i) {
      context->barrier();  // start together: the op's time, not the slowest arrival's
      const auto start = std::chrono::steady_clock::now();
      context->all_reduce(t, ReduceOp::kSum);
      times.add(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count(),
                1);
    }
  });
  return times.median() / 1e3;
}

}  // namespace

int run_scale(int argc, char** argv) {
  // parse_command_line reads argv[0] as the program name: put the subcommand there.
  std::vector<char*> args{const_cast<char*>("strata_bench scale")};
  args.insert(args.end(), argv, argv + argc);
  try {
    apps::parse_command_line(int(args.size()), args.data(),
                             "One worker of a MultiWorkerMirroredStrategy job: time to ready, "
                             "4 KB and 16 MB all-reduce, coordination-service bytes.");
  } catch (const apps::FlagError& e) {
    std::fprintf(stderr, "strata_bench scale: %s\n", e.what());
    return 2;
  }
  const char* t0_text = std::getenv("STRATA_SCALE_T0");
  const double t0 = t0_text != nullptr ? std::atof(t0_text) : now_s();
  // Launched to here: starting the process and loading its libraries, which on a machine with
  // fewer cores than processes grows with N before any rendezvous starts.
  const double started = now_s() - t0;
  const int small_reps = absl::GetFlag(FLAGS_small_reps).value;
  const int large_reps = absl::GetFlag(FLAGS_large_reps).value;
  try {
    distribute::MultiWorkerMirroredStrategy strategy;
    const double ready = now_s() - t0;
    const int64_t store_ready = distribute::coordination_key_value_bytes();
    const int worker = strategy.worker_index(), n = strategy.num_workers();
    std::printf("SCALE_READY %d %.3f %.3f\n", worker, ready, started);
    std::fflush(stdout);
    const double small = time_all_reduce(strategy, 4096, 3, small_reps);
    const int64_t large_bytes = 16 << 20;
    const double large = time_all_reduce(strategy, large_bytes, 1, large_reps);
    const double busbw = double(large_bytes) * 2.0 * (n - 1) / n / large / 1e9;
    if (worker == 0) {
      std::printf("SCALE %d ready %.3f small_us %.1f large_ms %.1f busbw_gbs %.3f store_bytes %lld "
                  "%lld\n",
                  n, ready, small * 1e6, large * 1e3, busbw, static_cast<long long>(store_ready),
                  static_cast<long long>(distribute::coordination_key_value_bytes()));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata_bench scale: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace strata::bench
