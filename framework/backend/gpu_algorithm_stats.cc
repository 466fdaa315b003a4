#include "framework/backend/gpu_algorithm_stats.h"

#include <atomic>

namespace strata::gpu {
namespace {

std::atomic<int64_t> g_convolution_searches{0};
std::atomic<int64_t> g_matmul_searches{0};

}  // namespace

AlgorithmSearchCounts algorithm_search_counts() {
  return AlgorithmSearchCounts{g_convolution_searches.load(), g_matmul_searches.load()};
}

void record_convolution_search() { g_convolution_searches.fetch_add(1); }
void record_matmul_search() { g_matmul_searches.fetch_add(1); }

}  // namespace strata::gpu
