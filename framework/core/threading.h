// Intra-op threads. All cores by default; STRATA_NUM_THREADS or set_num_threads() change it.
// oneDNN and Strata's own loops share one OpenMP pool, so the setting covers both.
#pragma once

namespace strata {

void set_num_threads(int n);  // throws ValueError for n < 1
int get_num_threads();

}  // namespace strata
