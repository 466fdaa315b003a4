// Intra-op threads. All cores by default; STRATA_NUM_THREADS or set_num_threads() change it.
// oneDNN and Strata's own loops share one OpenMP pool, so the setting covers both.
#pragma once

namespace strata {

void set_num_threads(int n);  // throws ValueError for n < 1
int get_num_threads();

// This thread's own share of the cores: its kernels use n threads instead of the global count
// (a replica thread of a logical CPU device gets its device's share). 0 returns to the global
// count. Throws ValueError for n < 0.
void set_thread_share(int n);
int thread_share();  // 0 when this thread follows the global count

}  // namespace strata
