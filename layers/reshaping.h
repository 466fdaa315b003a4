// Reshaping layers (keras.layers.Flatten, Reshape, Permute, ZeroPadding2D). Shapes and dims
// exclude the batch axis, as in Keras; none has weights.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "framework/model/layer.h"

namespace strata {

// [batch, d1, d2, ...] -> [batch, d1*d2*...]; rank-1 inputs become [batch, 1].
class Flatten : public Layer {
 public:
  STRATA_LAYER(Flatten)
  explicit Flatten(const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Flatten"; }
  Json get_config() const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;
};

// [batch, ...] -> [batch, *target_shape]; one entry of target_shape may be -1 (inferred).
class Reshape : public Layer {
 public:
  STRATA_LAYER(Reshape)
  explicit Reshape(std::vector<int64_t> target_shape, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Reshape"; }
  Json get_config() const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::vector<int64_t> target_shape_;
};

// Permutes the non-batch axes; dims are 1-based as in Keras: Permute({2, 1}) swaps axes 1 and 2.
class Permute : public Layer {
 public:
  STRATA_LAYER(Permute)
  explicit Permute(std::vector<int> dims, const std::string& name = "");
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "Permute"; }
  Json get_config() const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::vector<int> dims_;
};

// ZeroPadding2D's padding: an int (all four sides), {h, w} (symmetric), or {{top, bottom},
// {left, right}}.
struct Padding2D {
  int top = 1, bottom = 1, left = 1, right = 1;
  Padding2D(int p) : top(p), bottom(p), left(p), right(p) {}  // NOLINT: Keras' int form
  Padding2D(int h, int w) : top(h), bottom(h), left(w), right(w) {}
  Padding2D(std::pair<int, int> tb, std::pair<int, int> lr)
      : top(tb.first), bottom(tb.second), left(lr.first), right(lr.second) {}
};

// Pads NHWC inputs with zeros along H and W.
class ZeroPadding2D : public Layer {
 public:
  STRATA_LAYER(ZeroPadding2D)
  explicit ZeroPadding2D(Padding2D padding = 1) : ZeroPadding2D(padding, std::string()) {}
  // A template so that braced paddings ({1, 2}, {{0, 1}, {2, 0}}) are not ambiguous with the
  // (deleted) copy constructor reached through a std::string built from `0` or `{2, 0}`.
  template <typename S>
    requires(std::is_constructible_v<std::string, const S&> && !std::is_arithmetic_v<S>)
  ZeroPadding2D(Padding2D padding, const S& name) : ZeroPadding2D(padding, std::string(name), 0) {}
  static std::shared_ptr<Layer> from_config(const Json& config);
  std::string class_name() const override { return "ZeroPadding2D"; }
  Json get_config() const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  ZeroPadding2D(Padding2D padding, std::string name, int /*tag*/);
  Padding2D padding_;
};

}  // namespace strata
