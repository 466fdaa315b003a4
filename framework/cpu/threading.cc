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
thread_local int t_share = 0;     // this thread's own count (0: the global one)
thread_local int t_applied = -1;  // the count last given to OpenMP on this thread

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
  const int want = t_share > 0 ? t_share : g_threads.load();
  if (t_applied != want) {
    omp_set_num_threads(want);
    t_applied = want;
  }
}
int max_threads() { return t_share > 0 ? t_share : g_threads.load(); }
}  // namespace cpu

void set_num_threads(int n) {
  if (n < 1) throw ValueError("set_num_threads: expected n >= 1, got " + std::to_string(n));
  cpu::ensure_threads_initialised();
  g_threads = n;
  cpu::ensure_threads_initialised();
}

void set_thread_share(int n) {
  if (n < 0) throw ValueError("set_thread_share: expected n >= 0, got " + std::to_string(n));
  t_share = n;
  cpu::ensure_threads_initialised();
}

int thread_share() { return t_share; }

int get_num_threads() {
  cpu::ensure_threads_initialised();
  return g_threads;
}

}  // namespace strata
