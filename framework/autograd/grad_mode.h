// GradientTape and NoGradGuard: what switches recording on and off, per thread.
#pragma once

#include <functional>
#include <vector>

#include "framework/autograd/indexed_slices.h"
#include "framework/core/tensor.h"

namespace strata {

class Variable;

// What gradient() returns for a source the target does not depend on (TensorFlow's
// UnconnectedGradients): an undefined Tensor (NONE) or zeros shaped like the source (ZERO).
enum class UnconnectedGradients { kNone, kZero };

// Records operations on watched tensors and on trainable variables read while it is active, so
// gradient() can differentiate through them. TensorFlow semantics: a non-persistent tape allows
// one gradient() call and frees what it saved as the backward pass goes; a persistent one allows
// many. Tapes are per thread and may nest.
class GradientTape {
 public:
  explicit GradientTape(bool persistent = false, bool watch_accessed_variables = true);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Starts tracking a tensor (a floating one); ops on it from now on are recorded.
  void watch(const Tensor& t);
  void watch(const Variable& v);

  // d(target)/d(source) for each source. A non-scalar target is summed first (all-ones seed)
  // unless `output_gradient` is given.
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Tensor>& sources,
                               const Tensor& output_gradient = Tensor(),
                               UnconnectedGradients unconnected = UnconnectedGradients::kNone);
  std::vector<Tensor> gradient(const Tensor& target,
                               const std::vector<std::shared_ptr<Variable>>& sources,
                               const Tensor& output_gradient = Tensor(),
                               UnconnectedGradients unconnected = UnconnectedGradients::kNone);
  Tensor gradient(const Tensor& target, const Tensor& source);
  // As gradient(), except that a variable read only through gather (Embedding's table) gets its
  // gradient as IndexedSlices: the looked-up rows, not a dense table-sized tensor (TensorFlow's
  // tape returns tf.IndexedSlices there). A variable also read whole gets a dense gradient. The
  // ready callback hears of dense gradients only; sparse ones are in the result.
  std::vector<Gradient> gradient_with_slices(
      const Tensor& target, const std::vector<std::shared_ptr<Variable>>& sources,
      UnconnectedGradients unconnected = UnconnectedGradients::kNone);

  // Called with (source index, gradient) as soon as that source's gradient is final, while the
  // backward pass goes on: a data-parallel trainer starts all-reducing early gradients during
  // the rest of the backward pass. Every source is reported exactly once per gradient() call
  // (unconnected ones at the end), in the order their gradients complete.
  using GradientReadyFn = std::function<void(size_t source, const Tensor& gradient)>;
  void set_gradient_ready_callback(GradientReadyFn fn) { on_ready_ = std::move(fn); }

  bool persistent() const { return persistent_; }
  bool watch_accessed_variables() const { return watch_accessed_variables_; }

 private:
  std::vector<Gradient> run(const Tensor& target, const std::vector<Tensor>& sources,
                            const Tensor& output_gradient, UnconnectedGradients unconnected,
                            bool with_slices);

  bool persistent_;
  bool watch_accessed_variables_;
  bool used_ = false;
  bool active_ = true;
  GradientReadyFn on_ready_;
};

// Turns recording off on this thread for its lifetime (inference, optimizer updates).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

namespace autograd {
// True when a tape that watches accessed variables is active (and recording is on).
bool should_watch_variables();
}  // namespace autograd

}  // namespace strata
