// Internal: parallel loops for CPU kernels. Work is split in fixed-size blocks, so results that
// depend on the split (reductions) are the same for every thread count.
#pragma once

#include <algorithm>
#include <cstdint>

namespace strata::cpu {

// Below this many elements a loop runs on the calling thread: forking costs more than it saves.
inline constexpr int64_t kParallelGrain = 32768;

void ensure_threads_initialised();
int max_threads();

// Calls fn(begin, end) over [0, n) in chunks of at least `grain`, in parallel.
template <typename Fn>
void parallel_for(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  ensure_threads_initialised();
  if (n <= grain || max_threads() == 1) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, int64_t(max_threads()) * 4);
  const int64_t chunk = (n + chunks - 1) / chunks;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * chunk, end = std::min(n, begin + chunk);
    if (begin < end) fn(begin, end);
  }
}

}  // namespace strata::cpu
