// Where a training step's time goes (strata_bench train --phases N): the step's parts run alone,
// N times each, and for each the host's time to queue the work ("issue": the calls return) is
// printed beside the time until the device has finished it ("done"). Where issue is close to
// done the device waits for the host (launch and bookkeeping costs), and a faster kernel would
// not help; where done is well above issue the kernels themselves take the time.
#pragma once

#include <vector>

#include <strata/strata.h>

namespace strata::bench {

// Prints one line per phase: the inference forward pass, the training forward pass with the
// loss and the backward pass (under a GradientTape), the optimizer's apply_gradients on those
// gradients, and a whole train_on_batch step, each the median over `reps` runs after one
// warm-up. `model` is built and compiled; (x, y) is a batch on its device.
void print_step_phases(Model& model, const Tensor& x, const Tensor& y,
                       const std::vector<Device>& devices, int reps);

}  // namespace strata::bench
