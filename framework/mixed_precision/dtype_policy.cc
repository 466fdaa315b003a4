#include "framework/mixed_precision/dtype_policy.h"

#include <utility>

#include "framework/core/error.h"

namespace strata::mixed_precision {
namespace {

struct NamedPolicy {
  const char* name;
  DType compute;
  DType variable;
};

// Floating policies first: they are the ones a model is trained with.
constexpr NamedPolicy kPolicies[] = {
    {"float32", DType::kFloat32, DType::kFloat32},
    {"float16", DType::kFloat16, DType::kFloat16},
    {"bfloat16", DType::kBFloat16, DType::kBFloat16},
    {"float64", DType::kFloat64, DType::kFloat64},
    {"mixed_float16", DType::kFloat16, DType::kFloat32},
    {"mixed_bfloat16", DType::kBFloat16, DType::kFloat32},
    {"int32", DType::kInt32, DType::kInt32},
    {"int64", DType::kInt64, DType::kInt64},
    {"uint8", DType::kUInt8, DType::kUInt8},
    {"bool", DType::kBool, DType::kBool},
};

}  // namespace

std::string valid_policy_names() {
  std::string out;
  for (const NamedPolicy& p : kPolicies) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

DTypePolicy::DTypePolicy(const std::string& name) : name_(name) {
  for (const NamedPolicy& p : kPolicies) {
    if (name == p.name) {
      compute_ = p.compute;
      variable_ = p.variable;
      return;
    }
  }
  throw ValueError("DTypePolicy: cannot convert '" + name + "' to a dtype policy; valid "
                   "policies are " + valid_policy_names() +
                   " (use \"mixed_float16\" or \"mixed_bfloat16\" for mixed precision)");
}

Json DTypePolicy::to_config() const {
  if (name_ == "float32") return Json(name_);
  return Json::object({{"module", "keras"},
                       {"class_name", "DTypePolicy"},
                       {"config", Json::object({{"name", name_}})},
                       {"registered_name", nullptr}});
}

DTypePolicy DTypePolicy::from_config(const Json& config) {
  if (config.is_string()) return DTypePolicy(config.as_string());
  const std::string cls = config.is_object() ? config.get("class_name", Json("")).as_string() : "";
  // Keras 3 writes DTypePolicy (FloatDTypePolicy in 3.0-3.3), Keras 2 Policy.
  if (cls == "DTypePolicy" || cls == "FloatDTypePolicy" || cls == "Policy") {
    const Json inner = config.get("config", Json());
    if (inner.is_object() && inner.contains("name") && inner.at("name").is_string()) {
      return DTypePolicy(inner.at("name").as_string());
    }
  }
  throw ValueError("DTypePolicy: cannot read the dtype policy " + config.dump() +
                   "; expected a name such as \"mixed_float16\" or {\"class_name\": "
                   "\"DTypePolicy\", \"config\": {\"name\": ...}}");
}

}  // namespace strata::mixed_precision
