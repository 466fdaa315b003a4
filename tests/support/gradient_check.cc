#include "support/gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>

namespace strata::testing {
namespace {

double weighted_sum(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                    const std::vector<Tensor>& inputs, const Tensor& weights) {
  NoGradGuard no_grad;
  const Tensor y = f(inputs);
  const std::vector<double> yv = y.to_vector<double>();
  const std::vector<double> wv = weights.to_vector<double>();
  double s = 0;
  for (size_t i = 0; i < yv.size(); ++i) s += yv[i] * wv[i];
  return s;
}

}  // namespace

void expect_gradients_match(const char* name,
                            const std::function<Tensor(const std::vector<Tensor>&)>& f,
                            const std::vector<Tensor>& inputs, GradCheckOptions options) {
  // Analytic gradients.
  std::vector<Tensor> watched;
  for (const Tensor& x : inputs) watched.push_back(x.clone());
  Tensor weights;
  std::vector<Tensor> analytic;
  {
    GradientTape tape;
    for (const Tensor& x : watched) {
      if (is_floating(x.dtype())) tape.watch(x);
    }
    const Tensor y = f(watched);
    weights = random_uniform(y.shape(), 0.5, 1.5, y.dtype(), /*seed=*/1234).to(y.device());
    const Tensor loss = reduce_sum(y * weights);
    analytic = tape.gradient(loss, watched, Tensor(), UnconnectedGradients::kZero);
  }

  // Numeric gradients, one element at a time, on float64 copies where the op allows.
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!is_floating(inputs[k].dtype())) continue;
    ASSERT_TRUE(analytic[k].defined()) << name << ": no gradient for input " << k;
    ASSERT_EQ(analytic[k].shape(), inputs[k].shape()) << name << ": gradient shape, input " << k;
    const std::vector<double> grad = analytic[k].to_vector<double>();
    const std::vector<double> base = inputs[k].to_vector<double>();
    int failures = 0;
    for (size_t i = 0; i < base.size() && failures < 5; ++i) {
      std::vector<Tensor> plus = inputs, minus = inputs;
      std::vector<double> vp = base, vm = base;
      vp[i] += options.epsilon;
      vm[i] -= options.epsilon;
      // Built on the host, then moved to the input's device (a GPU gradient check).
      plus[k] = Tensor::from_vector(vp, inputs[k].shape()).cast(inputs[k].dtype()).to(
          inputs[k].device());
      minus[k] = Tensor::from_vector(vm, inputs[k].shape()).cast(inputs[k].dtype()).to(
          inputs[k].device());
      // The step actually taken after rounding to the input dtype.
      const double step = plus[k].to_vector<double>()[i] - minus[k].to_vector<double>()[i];
      const double numeric =
          (weighted_sum(f, plus, weights) - weighted_sum(f, minus, weights)) / step;
      const double tol = options.atol + options.rtol * std::fabs(numeric);
      if (!(std::fabs(grad[i] - numeric) <= tol)) {
        ++failures;
        ADD_FAILURE() << name << ": d/d input " << k << " element " << i << ": autograd "
                      << grad[i] << " vs finite difference " << numeric;
      }
    }
  }
}

void expect_all_close(const Tensor& a, const Tensor& b, double rtol, double atol) {
  ASSERT_EQ(a.shape(), b.shape());
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  for (size_t i = 0; i < av.size(); ++i) {
    // Equal values pass outright: inf - inf is NaN, which no tolerance accepts.
    const bool same = av[i] == bv[i] || (std::isnan(av[i]) && std::isnan(bv[i]));
    if (!same && !(std::fabs(av[i] - bv[i]) <= atol + rtol * std::fabs(bv[i]))) {
      ADD_FAILURE() << "element " << i << ": " << av[i] << " vs expected " << bv[i];
      return;
    }
  }
}

}  // namespace strata::testing
