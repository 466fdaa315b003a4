#include "step_phases.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "step_timer.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Runs `phase` once to warm up, then `reps` times, each started with the devices idle; prints
// the medians of the issue and done times.
void time_phase(const char* name, const std::function<void()>& phase,
                const std::vector<Device>& devices, int reps) {
  phase();
  synchronize(devices);
  StepTimes issue, done;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    phase();
    issue.add(ms_since(t0), 1);
    synchronize(devices);
    done.add(ms_since(t0), 1);
  }
  const double is = issue.median(), dn = done.median();
  std::printf("phase %-22s issue %8.2f ms   done %8.2f ms   issue/done %3.0f%%\n", name, is, dn,
              dn > 0 ? 100.0 * std::min(is, dn) / dn : 0.0);
}

}  // namespace

void print_step_phases(Model& model, const Tensor& x, const Tensor& y,
                       const std::vector<Device>& devices, int reps) {
  const std::vector<VariablePtr> vars = model.trainable_variables();
  // A stand-in loss of the same cost order as the compiled one (the logits' mean): the backward
  // pass then runs through every layer, as in training.
  const auto forward_backward = [&] {
    GradientTape tape;
    const Tensor out = model(x, /*training=*/true);
    return tape.gradient(reduce_mean(out.cast(float32)), vars);
  };
  std::vector<Tensor> grads = forward_backward();
  std::printf("phases            median of %d runs each, the device idle at each start; issue/done "
              "near 100%%: the host sets the pace (on a CPU, always)\n", reps);
  time_phase("forward (inference)", [&] {
    NoGradGuard no_grad;
    model(x, /*training=*/false);
  }, devices, reps);
  time_phase("forward (training)", [&] {
    GradientTape tape;
    model(x, /*training=*/true);
  }, devices, reps);
  time_phase("forward + backward", [&] { grads = forward_backward(); }, devices, reps);
  time_phase("optimizer", [&] { model.optimizer()->apply_gradients(grads, vars); }, devices, reps);
  time_phase("train_on_batch", [&] { model.train_on_batch(x, y); }, devices, reps);
}

}  // namespace strata::bench
