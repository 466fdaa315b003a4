#include "layers/reshaping.h"

#include <algorithm>

#include "framework/ops/shape_ops.h"
#include "layers/layer_utils.h"

namespace strata {

using namespace layer_utils;

namespace {
std::string join(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}
}  // namespace

// ---- Flatten ----

Flatten::Flatten(const std::string& name) : Layer("flatten", name) {}

Tensor Flatten::call(const Tensor& x, bool) {
  if (x.rank() < 1) {
    throw ShapeError(describe(*this) + ": expected inputs with a batch axis, got shape " +
                     x.shape().to_string());
  }
  int64_t n = 1;
  for (int i = 1; i < x.rank(); ++i) n *= x.shape()[i];
  return reshape(x, Shape{x.shape()[0], n});
}

Json Flatten::get_config() const {
  Json c = Layer::get_config();
  c.set("data_format", "channels_last");
  return c;
}

std::shared_ptr<Layer> Flatten::from_config(const Json& c) {
  // channels_first would change the order of the flattened features: refuse rather than differ.
  check_data_format(c.get("data_format", "channels_last").as_string(), "Flatten");
  return finish_from_config(std::make_shared<Flatten>(c.get("name", "").as_string()), c);
}

// ---- Reshape ----

Reshape::Reshape(std::vector<int64_t> target_shape, const std::string& name)
    : Layer("reshape", name), target_shape_(std::move(target_shape)) {
  int unknown = 0;
  for (int64_t d : target_shape_) {
    if (d == -1) {
      ++unknown;
    } else if (d <= 0) {
      throw ValueError("Reshape: target_shape dims must be positive or -1, got " + join(target_shape_));
    }
  }
  if (unknown > 1) {
    throw ValueError("Reshape: at most one dim of target_shape may be -1, got " + join(target_shape_));
  }
}

Tensor Reshape::call(const Tensor& x, bool) {
  if (x.rank() < 1) {
    throw ShapeError(describe(*this) + ": expected inputs with a batch axis, got shape " +
                     x.shape().to_string());
  }
  int64_t in = 1, known = 1;
  for (int i = 1; i < x.rank(); ++i) in *= x.shape()[i];
  std::vector<int64_t> dims{x.shape()[0]};
  for (int64_t d : target_shape_) known *= d == -1 ? 1 : d;
  const bool infer = std::count(target_shape_.begin(), target_shape_.end(), -1) > 0;
  if ((!infer && known != in) || (infer && (known == 0 || in % known != 0))) {
    throw ShapeError(describe(*this) + ": cannot reshape inputs of shape " + x.shape().to_string() +
                     " (" + std::to_string(in) + " values per sample) to target_shape " +
                     join(target_shape_));
  }
  for (int64_t d : target_shape_) dims.push_back(d == -1 ? in / known : d);
  return reshape(x, Shape(std::move(dims)));
}

Json Reshape::get_config() const {
  Json c = Layer::get_config();
  c.set("target_shape", target_shape_);
  return c;
}

std::shared_ptr<Layer> Reshape::from_config(const Json& c) {
  // Keras 3 writes an unknown dimension as null ([null, 4]): the one to infer, like -1.
  const Json t = c.at("target_shape");
  if (!t.is_array()) {
    throw ValueError("Reshape: target_shape must be a list of integers, got " + t.dump());
  }
  std::vector<int64_t> target;
  for (size_t i = 0; i < t.size(); ++i) target.push_back(t.at(i).is_null() ? -1 : t.at(i).as_int());
  return finish_from_config(std::make_shared<Reshape>(target, c.get("name", "").as_string()), c);
}

// ---- Permute ----

Permute::Permute(std::vector<int> dims, const std::string& name)
    : Layer("permute", name), dims_(std::move(dims)) {
  std::vector<int> sorted = dims_;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != int(i) + 1) {
      std::vector<int64_t> d(dims_.begin(), dims_.end());
      throw ValueError("Permute: dims must be a permutation of 1.." + std::to_string(dims_.size()) +
                       " (1-based; the batch axis is not included), got " + join(d));
    }
  }
}

Tensor Permute::call(const Tensor& x, bool) {
  if (x.rank() != int(dims_.size()) + 1) {
    throw ShapeError(describe(*this) + ": dims of length " + std::to_string(dims_.size()) +
                     " expect inputs of rank " + std::to_string(dims_.size() + 1) + ", got shape " +
                     x.shape().to_string());
  }
  std::vector<int> perm{0};
  perm.insert(perm.end(), dims_.begin(), dims_.end());
  return transpose(x, perm);
}

Json Permute::get_config() const {
  Json c = Layer::get_config();
  c.set("dims", std::vector<int64_t>(dims_.begin(), dims_.end()));
  return c;
}

std::shared_ptr<Layer> Permute::from_config(const Json& c) {
  const std::vector<int64_t> d = c.at("dims").as_int_vector();
  return finish_from_config(
      std::make_shared<Permute>(std::vector<int>(d.begin(), d.end()), c.get("name", "").as_string()), c);
}

// ---- ZeroPadding2D ----

ZeroPadding2D::ZeroPadding2D(Padding2D padding, std::string name, int)
    : Layer("zero_padding2d", name), padding_(padding) {
  if (padding.top < 0 || padding.bottom < 0 || padding.left < 0 || padding.right < 0) {
    throw ValueError("ZeroPadding2D: padding must be non-negative, got ((" +
                     std::to_string(padding.top) + ", " + std::to_string(padding.bottom) + "), (" +
                     std::to_string(padding.left) + ", " + std::to_string(padding.right) + "))");
  }
}

Tensor ZeroPadding2D::call(const Tensor& x, bool) {
  if (x.rank() != 4) {
    throw ShapeError(describe(*this) + ": expected inputs of rank 4 (batch, height, width, "
                     "channels), got shape " + x.shape().to_string());
  }
  const auto& p = padding_;
  return pad(x, {{0, 0}, {p.top, p.bottom}, {p.left, p.right}, {0, 0}});
}

Json ZeroPadding2D::get_config() const {
  Json c = Layer::get_config();
  const auto& p = padding_;
  c.set("padding", Json::array({Json(std::vector<int64_t>{p.top, p.bottom}),
                                Json(std::vector<int64_t>{p.left, p.right})}));
  c.set("data_format", "channels_last");
  return c;
}

std::shared_ptr<Layer> ZeroPadding2D::from_config(const Json& c) {
  check_data_format(c.get("data_format", "channels_last").as_string(), "ZeroPadding2D");
  const Json p = c.get("padding", 1);
  Padding2D padding(1);
  if (p.is_number()) {
    padding = Padding2D(int(p.as_int()));
  } else if (p.size() == 2 && p.at(size_t(0)).is_number()) {
    padding = Padding2D(int(p.at(size_t(0)).as_int()), int(p.at(size_t(1)).as_int()));
  } else if (p.size() == 2) {
    const auto tb = p.at(size_t(0)).as_int_vector(), lr = p.at(size_t(1)).as_int_vector();
    if (tb.size() != 2 || lr.size() != 2) throw ValueError("ZeroPadding2D: bad padding " + p.dump());
    padding = Padding2D({int(tb[0]), int(tb[1])}, {int(lr[0]), int(lr[1])});
  } else {
    throw ValueError("ZeroPadding2D: bad padding " + p.dump());
  }
  return finish_from_config(std::make_shared<ZeroPadding2D>(padding, c.get("name", "").as_string()), c);
}

}  // namespace strata
