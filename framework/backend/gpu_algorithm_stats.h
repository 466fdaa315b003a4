// Counts of the CUDA backend's algorithm searches: a cuDNN convolution algorithm search (one per
// new shape, direction, dtype and math mode) and a cuBLASLt heuristic query (one per new matmul
// shape). The backend caches each result, so a training loop searches only in its first step;
// tests read these counts to check that a repeated call reuses the cached choice. No CUDA headers:
// compiled in every build (the counts stay 0 without CUDA).
#pragma once

#include <cstdint>

namespace strata::gpu {

struct AlgorithmSearchCounts {
  int64_t convolution = 0;
  int64_t matmul = 0;
};

// Totals since the process started, over all devices and threads.
AlgorithmSearchCounts algorithm_search_counts();

// Called by the CUDA backend on each cache miss.
void record_convolution_search();
void record_matmul_search();

}  // namespace strata::gpu
