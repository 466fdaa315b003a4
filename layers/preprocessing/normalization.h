// Normalization: y = (x - mean) / max(sqrt(variance), 1e-7), like keras.layers.Normalization
// (invert=true gives mean + x * max(sqrt(variance), 1e-7)). The statistics are either given
// (mean / variance options) or learned with adapt(data), which computes them per position of
// the kept `axis` over every other axis and stores them in the non-trainable weights "mean",
// "variance" and "count" (Keras 3's layout, so checkpoints restore them).
//
//   Normalization norm;                  // axis -1: one mean/variance per feature
//   norm.adapt(x_train);                 // before building a model with it, as in Keras
//   Tensor y = norm(x);
#pragma once

#include <optional>
#include <vector>

#include "framework/model/layer.h"

namespace strata {

struct NormalizationOptions {
  std::vector<int> axis_ = {-1};  // kept axes; empty = Keras' axis=None (one global mean)
  std::optional<std::vector<double>> mean_, variance_;  // one value, or one per kept position
  bool mean_is_scalar_ = false, variance_is_scalar_ = false;
  bool invert_ = false;
  std::string name_;

  NormalizationOptions& axis(int a) { axis_ = {a}; return *this; }
  NormalizationOptions& axis(std::vector<int> a) { axis_ = std::move(a); return *this; }
  NormalizationOptions& mean(double m) { mean_ = std::vector<double>{m}; mean_is_scalar_ = true; return *this; }
  NormalizationOptions& mean(std::vector<double> m) { mean_ = std::move(m); mean_is_scalar_ = false; return *this; }
  NormalizationOptions& variance(double v) { variance_ = std::vector<double>{v}; variance_is_scalar_ = true; return *this; }
  NormalizationOptions& variance(std::vector<double> v) { variance_ = std::move(v); variance_is_scalar_ = false; return *this; }
  NormalizationOptions& invert(bool i) { invert_ = i; return *this; }
  NormalizationOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class Normalization : public Layer {
 public:
  STRATA_LAYER(Normalization)
  explicit Normalization(const NormalizationOptions& options = {});
  static std::shared_ptr<Layer> from_config(const Json& config);

  std::string class_name() const override { return "Normalization"; }
  Json get_config() const override;

  // Computes the mean and variance of `data` (a whole dataset as one tensor, batch axis
  // first) and stores them in the layer's weights; builds the layer from data's shape if needed.
  void adapt(const Tensor& data);
  // True once adapt() ran, when mean/variance were given, or when the weights were restored.
  bool is_adapted() const;

  // The statistics in use, shaped for broadcasting against the inputs (after build).
  Tensor mean() const;
  Tensor variance() const;

 protected:
  void build(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::vector<int> keep_axes(int rank) const;

  NormalizationOptions options_;
  Shape build_shape_;
  std::vector<int> keep_, reduce_;
  Shape broadcast_shape_, stats_shape_;
  Tensor given_mean_, given_variance_;  // broadcast-shaped, when given as options
  VariablePtr mean_var_, variance_var_, count_var_;
  bool adapted_ = false;
};

}  // namespace strata
