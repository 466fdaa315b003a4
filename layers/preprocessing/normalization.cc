#include "layers/preprocessing/normalization.h"

#include <algorithm>

#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"
#include "layers/preprocessing/preprocessing_utils.h"

namespace strata {

namespace {
constexpr double kEpsilon = 1e-7;  // keras.backend.epsilon()

std::string axes_string(const std::vector<int>& axes) {
  std::string s = "(";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + ")";
}
}  // namespace

Normalization::Normalization(const NormalizationOptions& options)
    : Layer("normalization", options.name_), options_(options) {
  if (options_.mean_.has_value() != options_.variance_.has_value()) {
    throw ValueError("Normalization: when setting values directly, both `mean` and `variance` "
                     "must be set");
  }
  if (options_.mean_ && options_.mean_->size() != options_.variance_->size()) {
    throw ValueError("Normalization: `mean` and `variance` must have the same size, got " +
                     std::to_string(options_.mean_->size()) + " and " +
                     std::to_string(options_.variance_->size()));
  }
  if (options_.mean_ && options_.mean_->empty()) {
    throw ValueError("Normalization: `mean` and `variance` must not be empty");
  }
}

std::vector<int> Normalization::keep_axes(int rank) const {
  std::vector<int> keep;
  for (int a : options_.axis_) {
    if (a < -rank || a >= rank) {
      throw ValueError("Normalization: all `axis` values must be in the range [-ndim, ndim). "
                       "Received inputs with ndim=" + std::to_string(rank) +
                       ", while axis=" + axes_string(options_.axis_));
    }
    keep.push_back(a < 0 ? a + rank : a);
  }
  std::sort(keep.begin(), keep.end());  // sorted, as Keras, to avoid transposing
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  return keep;
}

void Normalization::build(const Shape& input_shape) {
  const int rank = input_shape.rank();
  build_shape_ = input_shape;
  keep_ = keep_axes(rank);
  reduce_.clear();
  std::vector<int64_t> bshape(size_t(rank), 1), sshape;
  for (int d = 0; d < rank; ++d) {
    if (std::find(keep_.begin(), keep_.end(), d) != keep_.end()) {
      bshape[size_t(d)] = input_shape[d];
      sshape.push_back(input_shape[d]);
    } else {
      reduce_.push_back(d);
    }
  }
  broadcast_shape_ = Shape(bshape);
  stats_shape_ = Shape(sshape);
  if (options_.mean_) {
    // Given statistics: one value for everything, or one per kept position.
    const int64_t n = stats_shape_.numel();
    auto expand = [&](const std::vector<double>& v, const char* what) {
      if (int64_t(v.size()) != 1 && int64_t(v.size()) != n) {
        throw ValueError(std::string("Normalization '") + name() + "': `" + what + "` has " +
                         std::to_string(v.size()) + " values but the kept axes " +
                         axes_string(options_.axis_) + " of inputs " + input_shape.to_string() +
                         " need 1 or " + std::to_string(n));
      }
      std::vector<float> f(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) f[size_t(i)] = float(v[v.size() == 1 ? 0 : size_t(i)]);
      return Tensor::from_vector(f, broadcast_shape_);
    };
    given_mean_ = expand(*options_.mean_, "mean");
    given_variance_ = expand(*options_.variance_, "variance");
    return;
  }
  auto state = [](Initializer init, DType dtype) {
    WeightOptions w;
    w.initializer = std::move(init);
    w.dtype = dtype;
    w.trainable = false;
    w.autocast = false;  // statistics stay float32: call() normalises in float32
    return w;
  };
  mean_var_ = add_weight("mean", stats_shape_, state(initializers::zeros(), float32));
  variance_var_ = add_weight("variance", stats_shape_, state(initializers::ones(), float32));
  // Keras 3 keeps "count" for compatibility with older saved models; we record the number of
  // reduced elements of the last adapt() in it.
  count_var_ = add_weight("count", Shape{}, state(initializers::zeros(), int64));
}

void Normalization::adapt(const Tensor& data) {
  if (options_.mean_) {
    throw ValueError("Normalization '" + name() + "': adapt() cannot be used when `mean` and "
                     "`variance` were given to the constructor");
  }
  if (!data.defined() || data.numel() == 0) {
    throw ValueError("Normalization '" + name() + "': adapt() needs non-empty data");
  }
  if (!built()) {
    build(data.shape());
    set_built();
  } else {
    for (int d : keep_) {
      if (data.rank() != build_shape_.rank() || data.shape()[d] != build_shape_[d]) {
        throw ValueError("Normalization '" + name() + "': the layer was built with input_shape=" +
                         build_shape_.to_string() + ", but adapt() is being called with data "
                         "with an incompatible shape, data.shape=" + data.shape().to_string());
      }
    }
  }
  // float64 accumulation: datasets can be large and a float32 sum loses precision.
  Tensor x = cast(data.to(Device::cpu()).detach(), float64);
  // (reduce_mean with no axes reduces everything, so "keep every axis" is handled apart.)
  Tensor m = reduce_.empty() ? x : reduce_mean(x, reduce_, /*keepdims=*/true);
  Tensor v = reduce_.empty() ? zeros_like(x)
                             : reduce_mean(square(subtract(x, m)), reduce_, /*keepdims=*/true);
  mean_var_->assign(cast(m, float32).reshape(stats_shape_));
  variance_var_->assign(cast(v, float32).reshape(stats_shape_));
  count_var_->assign(Tensor::scalar<int64_t>(data.numel() / std::max<int64_t>(1, stats_shape_.numel())));
  adapted_ = true;
}

bool Normalization::is_adapted() const {
  if (adapted_ || options_.mean_) return true;
  if (!mean_var_) return false;
  // Weights restored from a checkpoint count as adapted: they differ from the initial 0 / 1.
  for (float m : mean_var_->value().to_vector<float>()) if (m != 0.f) return true;
  for (float v : variance_var_->value().to_vector<float>()) if (v != 1.f) return true;
  return false;
}

Tensor Normalization::mean() const {
  if (options_.mean_) return given_mean_;
  return mean_var_ ? mean_var_->value().reshape(broadcast_shape_) : Tensor();
}

Tensor Normalization::variance() const {
  if (options_.mean_) return given_variance_;
  return variance_var_ ? variance_var_->value().reshape(broadcast_shape_) : Tensor();
}

Tensor Normalization::call(const Tensor& x, bool) {
  // Not adapted yet: the initial mean 0 and variance 1 apply, as in Keras (a model being
  // rebuilt by load_model is called before its statistics are loaded).
  if (x.rank() != build_shape_.rank()) {
    throw ShapeError("Normalization '" + name() + "': expected inputs of rank " +
                     std::to_string(build_shape_.rank()) + " (built for " +
                     build_shape_.to_string() + "), got " + x.shape().to_string());
  }
  for (int d : keep_) {
    if (x.shape()[d] != build_shape_[d]) {
      throw ShapeError("Normalization '" + name() + "': expected inputs with dimension " +
                       std::to_string(d) + " of size " + std::to_string(build_shape_[d]) +
                       " (built for " + build_shape_.to_string() + "), got " +
                       x.shape().to_string());
    }
  }
  Tensor xf = x.dtype() == float32 ? x : cast(x, float32);
  Tensor scale = maximum(sqrt(variance()), full(Shape{}, kEpsilon));
  Tensor y = options_.invert_ ? add(mean(), multiply(xf, scale)) : divide(subtract(xf, mean()), scale);
  // Normalised in float32 (raw feature values and statistics lose nothing there), returned in
  // the compute dtype under a mixed policy.
  const DType out = is_floating(compute_dtype()) ? compute_dtype() : float32;
  return y.dtype() == out ? y : cast(y, out);
}

Json Normalization::get_config() const {
  Json c = Layer::get_config();
  Json axis = Json::array();
  for (int a : options_.axis_) axis.push_back(a);
  c.set("axis", axis);
  c.set("invert", options_.invert_);
  auto stats = [](const std::optional<std::vector<double>>& v, bool scalar) {
    if (!v) return Json();
    return scalar ? Json((*v)[0]) : preprocessing::doubles_to_json(*v);
  };
  c.set("mean", stats(options_.mean_, options_.mean_is_scalar_));
  c.set("variance", stats(options_.variance_, options_.variance_is_scalar_));
  return c;
}

std::shared_ptr<Layer> Normalization::from_config(const Json& c) {
  NormalizationOptions o;
  o.name(c.get("name", "").as_string()).invert(c.get("invert", false).as_bool());
  const Json axis = c.get("axis", Json(-1));
  if (axis.is_null()) {
    o.axis(std::vector<int>{});
  } else {
    std::vector<int> a;
    for (int64_t v : axis.as_int_vector()) a.push_back(int(v));
    o.axis(a);
  }
  const Json m = c.get("mean", Json()), v = c.get("variance", Json());
  if (!m.is_null()) m.is_number() ? void(o.mean(m.as_double())) : void(o.mean(preprocessing::doubles_from_json(m)));
  if (!v.is_null()) v.is_number() ? void(o.variance(v.as_double())) : void(o.variance(preprocessing::doubles_from_json(v)));
  auto layer = std::make_shared<Normalization>(o);
  if (!c.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

}  // namespace strata
