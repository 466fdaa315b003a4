#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/cpu/parallel.h"

namespace strata {
namespace {
std::atomic<int> g_threads{0};
std::once_flag g_init;

void init_from_env() {
  int n = omp_get_num_procs();
  if (const char* env = std::getenv("STRATA_NUM_THREADS")) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || v < 1 || v > 4096) {
      throw ValueError(std::string("STRATA_NUM_THREADS='") + env +
                       "' is not a positive integer; unset it or set e.g. STRATA_NUM_THREADS=2");
    }
    n = int(v);
  }
  g_threads = n;
}
}  // namespace

namespace cpu {
// OpenMP's thread count is a per-thread setting: apply the global one to each calling thread
// (the trainer's replica threads included) before it starts a parallel region or a oneDNN call.
void ensure_threads_initialised() {
  std::call_once(g_init, init_from_env);
  thread_local int applied = -1;
  if (applied != g_threads) {
    omp_set_num_threads(g_threads);
    applied = g_threads;
  }
}
int max_threads() { return g_threads; }
}  // namespace cpu

void set_num_threads(int n) {
  if (n < 1) throw ValueError("set_num_threads: expected n >= 1, got " + std::to_string(n));
  cpu::ensure_threads_initialised();
  g_threads = n;
  cpu::ensure_threads_initialised();
}

int get_num_threads() {
  cpu::ensure_threads_initialised();
  return g_threads;
}

}  // namespace strata
