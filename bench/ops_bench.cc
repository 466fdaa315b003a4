// `strata_bench ops`: throughput of the compute-bound kernels against the machine's measured
// fp32 peak. The peak is a large oneDNN sgemm (the best this machine's BLAS reaches); everything
// else goes through Strata's own API: strata::matmul and strata::conv2d for the forward passes,
// the backend's conv2d backward kernels (what autograd calls) for the gradients.
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "bench.h"
#include "framework/backend/backend.h"

namespace strata::bench {
namespace {

struct Timing {
  double best = 0, median = 0;  // seconds
};

Timing time_it(const std::function<void()>& fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return Timing{t.front(), t[t.size() / 2]};
}

struct Row {
  std::string op, shape;
  double flops;
  Timing t;
};

void print_row(const Row& r, double peak) {
  const double best = r.flops / r.t.best / 1e9, median = r.flops / r.t.median / 1e9;
  std::printf("%-22s %-34s %9.3f %9.1f %9.1f %8.0f%%\n", r.op.c_str(), r.shape.c_str(),
              r.t.best * 1e3, best, median, peak > 0 ? 100.0 * best / peak : 0.0);
  std::fflush(stdout);
}

// fp32 peak: oneDNN's sgemm on square matrices, best of `reps`.
Row measure_peak(int64_t n, int reps) {
  std::vector<float> a(size_t(n * n), 1.0f), b(size_t(n * n), 0.5f), c(size_t(n * n), 0.0f);
  auto run = [&] {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  };
  return Row{"peak: dnnl_sgemm", std::to_string(n) + "^3", 2.0 * double(n) * n * n,
             time_it(run, 2, reps)};
}

Row measure_matmul(int64_t m, int64_t k, int64_t n, int reps) {
  const Tensor a = random_normal({m, k}, 0, 1, float32, 1), b = random_normal({k, n}, 0, 1, float32, 2);
  Tensor out;
  auto run = [&] { out = matmul(a, b); };
  return Row{"matmul", "[" + std::to_string(m) + "," + std::to_string(k) + "]x[" +
                           std::to_string(k) + "," + std::to_string(n) + "]",
             2.0 * double(m) * n * k, time_it(run, 3, reps)};
}

// One ResNet-20 3x3 convolution (stride 1, "same"): forward, backward-data, backward-filter.
std::vector<Row> measure_conv(int64_t batch, int64_t hw, int64_t ch, int reps) {
  const Tensor x = random_normal({batch, hw, hw, ch}, 0, 1, float32, 3);
  const Tensor w = random_normal({3, 3, ch, ch}, 0, 0.1, float32, 4);
  const Tensor dy = random_normal({batch, hw, hw, ch}, 0, 1, float32, 5);
  Conv2DParams p;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  Backend& be = backend_for(x);
  Tensor y, dx = Tensor::empty(x.shape()), dw = Tensor::empty(w.shape());
  const double flops = 2.0 * double(batch) * hw * hw * ch * ch * 9;
  const std::string shape = "N" + std::to_string(batch) + " " + std::to_string(hw) + "x" +
                            std::to_string(hw) + "x" + std::to_string(ch) + " k3x3x" +
                            std::to_string(ch);
  std::vector<Row> rows;
  rows.push_back({"conv2d forward", shape, flops,
                  time_it([&] { y = conv2d(x, w, {1, 1}, "same"); }, 3, reps)});
  rows.push_back({"conv2d backward-data", shape, flops,
                  time_it([&] { be.conv2d_backward_data(dy, w, p, dx); }, 3, reps)});
  rows.push_back({"conv2d backward-filter", shape, flops,
                  time_it([&] { be.conv2d_backward_filter(x, dy, p, dw); }, 3, reps)});
  return rows;
}

}  // namespace

int run_ops(int argc, char** argv) {
  int reps = 10;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: strata_bench ops [--reps N]\n");
      return 2;
    }
  }
  // Applies Strata's thread count to this thread, so the peak sgemm uses the same threads.
  const int threads = get_num_threads();
  std::printf("strata_bench ops: %d threads, %d repetitions (GFLOP/s from best and median time)\n",
              threads, reps);
  std::printf("%-22s %-34s %9s %9s %9s %9s\n", "op", "shape", "best ms", "GFLOP/s", "median",
              "of peak");
  // The peak is the best of two sizes: 2048^3 fits the caches better, 4096^3 amortises more.
  const Row peaks[] = {measure_peak(2048, std::max(reps / 2, 3)), measure_peak(4096, 3)};
  double peak_gflops = 0;
  for (const Row& p : peaks) peak_gflops = std::max(peak_gflops, p.flops / p.t.best / 1e9);
  for (const Row& p : peaks) print_row(p, peak_gflops);
  NoGradGuard no_grad;
  print_row(measure_matmul(1024, 1024, 1024, reps), peak_gflops);
  for (auto [hw, ch] : {std::pair<int64_t, int64_t>{32, 16}, {16, 32}, {8, 64}}) {
    for (const Row& r : measure_conv(128, hw, ch, reps)) print_row(r, peak_gflops);
  }
  return 0;
}

}  // namespace strata::bench
