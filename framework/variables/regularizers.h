// Weight regularizers (Keras' L1, L2, L1L2): a penalty computed from a weight and added to the
// training loss through Layer::losses().
#pragma once

#include <functional>
#include <string>
#include <type_traits>

#include "framework/config/json.h"
#include "framework/core/tensor.h"

namespace strata {

class Regularizer {
 public:
  using Fn = std::function<Tensor(const Tensor& weight)>;
  Regularizer() = default;  // none
  Regularizer(std::string class_name, Json config, Fn fn);
  Regularizer(Fn fn);  // NOLINT: a custom penalty (saved as class "Custom")
  template <typename F, typename = std::enable_if_t<
                            std::is_invocable_r_v<Tensor, F, const Tensor&> &&
                            !std::is_same_v<std::decay_t<F>, Regularizer> &&
                            !std::is_same_v<std::decay_t<F>, Fn>>>
  Regularizer(F fn) : Regularizer(Fn(std::move(fn))) {}  // NOLINT

  Tensor operator()(const Tensor& weight) const;
  explicit operator bool() const { return bool(fn_); }
  const std::string& class_name() const { return class_name_; }
  Json to_json() const;  // {"class_name": "L2", "config": {"l2": 0.01}}

 private:
  std::string class_name_;
  Json config_;
  Fn fn_;
};

namespace regularizers {
Regularizer l1(double l1 = 0.01);
Regularizer l2(double l2 = 0.01);
Regularizer l1_l2(double l1 = 0.01, double l2 = 0.01);
// "l1", "l2", "l1_l2" (Keras defaults) or a class name; ValueError otherwise.
Regularizer get(const std::string& name);
// A name string or {"class_name": ..., "config": {...}}; null gives no regularizer.
Regularizer from_json(const Json& json);
}  // namespace regularizers

}  // namespace strata
