#include "framework/variables/regularizers.h"

#include "framework/ops/math_ops.h"

namespace strata {

Regularizer::Regularizer(std::string class_name, Json config, Fn fn)
    : class_name_(std::move(class_name)), config_(std::move(config)), fn_(std::move(fn)) {}

Regularizer::Regularizer(Fn fn) : class_name_("Custom"), config_(Json::object()), fn_(std::move(fn)) {}

Tensor Regularizer::operator()(const Tensor& weight) const {
  if (!fn_) throw ValueError("Regularizer: empty regularizer called");
  return fn_(weight);
}

Json Regularizer::to_json() const {
  return Json::object({{"class_name", class_name_}, {"config", config_}});
}

namespace regularizers {
namespace {
void check_factor(const char* name, double v) {
  if (!(v >= 0)) {
    throw ValueError(std::string("regularizers.") + name + ": factor must be >= 0, got " +
                     std::to_string(v));
  }
}
}  // namespace

Regularizer l1(double f) {
  check_factor("l1", f);
  return {"L1", Json::object({{"l1", f}}),
          [f](const Tensor& w) { return reduce_sum(abs(w)) * f; }};
}

Regularizer l2(double f) {
  check_factor("l2", f);
  return {"L2", Json::object({{"l2", f}}),
          [f](const Tensor& w) { return reduce_sum(square(w)) * f; }};
}

Regularizer l1_l2(double a, double b) {
  check_factor("l1_l2", a);
  check_factor("l1_l2", b);
  return {"L1L2", Json::object({{"l1", a}, {"l2", b}}), [a, b](const Tensor& w) {
            return reduce_sum(abs(w)) * a + reduce_sum(square(w)) * b;
          }};
}

Regularizer get(const std::string& name) {
  if (name == "l1" || name == "L1") return l1();
  if (name == "l2" || name == "L2") return l2();
  if (name == "l1_l2" || name == "L1L2") return l1_l2();
  throw ValueError("regularizers: unknown regularizer '" + name + "'; valid names: l1, l2, l1_l2");
}

Regularizer from_json(const Json& json) {
  if (json.is_null()) return {};
  if (json.is_string()) return get(json.as_string());
  const std::string cls = json.at("class_name").as_string();
  const Json c = json.get("config", Json::object());
  if (cls == "L1") return l1(c.get("l1", 0.01).as_double());
  if (cls == "L2") return l2(c.get("l2", 0.01).as_double());
  if (cls == "L1L2") return l1_l2(c.get("l1", 0.0).as_double(), c.get("l2", 0.0).as_double());
  return get(cls);
}

}  // namespace regularizers
}  // namespace strata
