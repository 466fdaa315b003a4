#include "framework/variables/initializers.h"

#include <cmath>
#include <functional>
#include <map>

#include "framework/ops/creation.h"

namespace strata {

Initializer::Initializer(std::string class_name, Json config, InitializerFn fn)
    : class_name_(std::move(class_name)), config_(std::move(config)), fn_(std::move(fn)) {}

Initializer::Initializer(InitializerFn fn)
    : class_name_("Custom"), config_(Json::object()), fn_(std::move(fn)) {}

Tensor Initializer::operator()(const Shape& shape, DType dtype) const {
  if (!fn_) throw ValueError("Initializer: empty initializer called");
  return fn_(shape, dtype);
}

Json Initializer::to_json() const {
  return Json::object({{"class_name", class_name_}, {"config", config_}});
}

namespace initializers {
namespace {
Json seed_json(int64_t seed) { return seed < 0 ? Json() : Json(seed); }
int64_t seed_from(const Json& config) {
  const Json s = config.get("seed", Json());
  return s.is_null() ? -1 : s.as_int();
}
}  // namespace

Fans compute_fans(const Shape& shape) {
  if (shape.rank() == 0) return {1, 1};
  if (shape.rank() == 1) return {double(shape[0]), double(shape[0])};
  if (shape.rank() == 2) return {double(shape[0]), double(shape[1])};
  double receptive = 1;
  for (int i = 0; i < shape.rank() - 2; ++i) receptive *= double(shape[i]);
  return {double(shape[shape.rank() - 2]) * receptive, double(shape[shape.rank() - 1]) * receptive};
}

Initializer zeros() {
  return {"Zeros", Json::object(), [](const Shape& s, DType d) { return strata::zeros(s, d); }};
}
Initializer ones() {
  return {"Ones", Json::object(), [](const Shape& s, DType d) { return strata::ones(s, d); }};
}
Initializer constant(double value) {
  return {"Constant", Json::object({{"value", value}}),
          [value](const Shape& s, DType d) { return strata::full(s, value, d); }};
}
Initializer random_uniform(double minval, double maxval, int64_t seed) {
  return {"RandomUniform",
          Json::object({{"minval", minval}, {"maxval", maxval}, {"seed", seed_json(seed)}}),
          [=](const Shape& s, DType d) { return strata::random_uniform(s, minval, maxval, d, seed); }};
}
Initializer random_normal(double mean, double stddev, int64_t seed) {
  return {"RandomNormal",
          Json::object({{"mean", mean}, {"stddev", stddev}, {"seed", seed_json(seed)}}),
          [=](const Shape& s, DType d) { return strata::random_normal(s, mean, stddev, d, seed); }};
}
Initializer truncated_normal(double mean, double stddev, int64_t seed) {
  return {"TruncatedNormal",
          Json::object({{"mean", mean}, {"stddev", stddev}, {"seed", seed_json(seed)}}),
          [=](const Shape& s, DType d) { return strata::truncated_normal(s, mean, stddev, d, seed); }};
}

namespace {
InitializerFn variance_scaling_fn(double scale, const std::string& mode,
                                  const std::string& distribution, int64_t seed) {
  if (!(scale > 0)) throw ValueError("variance_scaling: scale must be > 0, got " + std::to_string(scale));
  if (mode != "fan_in" && mode != "fan_out" && mode != "fan_avg") {
    throw ValueError("variance_scaling: mode must be fan_in, fan_out or fan_avg, got '" + mode + "'");
  }
  if (distribution != "truncated_normal" && distribution != "untruncated_normal" &&
      distribution != "uniform" && distribution != "normal") {
    throw ValueError("variance_scaling: distribution must be truncated_normal, untruncated_normal "
                     "or uniform, got '" + distribution + "'");
  }
  return [=](const Shape& s, DType d) {
    const Fans f = compute_fans(s);
    const double n = mode == "fan_in" ? f.fan_in : mode == "fan_out" ? f.fan_out
                                                                      : (f.fan_in + f.fan_out) / 2;
    const double variance = scale / std::max(1.0, n);
    if (distribution == "uniform") {
      const double limit = std::sqrt(3.0 * variance);
      return strata::random_uniform(s, -limit, limit, d, seed);
    }
    if (distribution == "untruncated_normal") {
      return strata::random_normal(s, 0.0, std::sqrt(variance), d, seed);
    }
    // Keras: stddev of a standard normal truncated to [-2, 2] is 0.8796...; undo that shrink.
    return strata::truncated_normal(s, 0.0, std::sqrt(variance) / 0.87962566103423978, d, seed);
  };
}

// The named special cases of VarianceScaling save only their seed, as Keras does.
Initializer named_scaling(const char* class_name, double scale, const char* mode,
                          const char* distribution, int64_t seed) {
  return {class_name, Json::object({{"seed", seed_json(seed)}}),
          variance_scaling_fn(scale, mode, distribution, seed)};
}
}  // namespace

Initializer variance_scaling(double scale, const std::string& mode,
                             const std::string& distribution, int64_t seed) {
  return {"VarianceScaling",
          Json::object({{"scale", scale}, {"mode", mode}, {"distribution", distribution},
                        {"seed", seed_json(seed)}}),
          variance_scaling_fn(scale, mode, distribution, seed)};
}
Initializer glorot_uniform(int64_t seed) { return named_scaling("GlorotUniform", 1.0, "fan_avg", "uniform", seed); }
Initializer glorot_normal(int64_t seed) { return named_scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal", seed); }
Initializer he_normal(int64_t seed) { return named_scaling("HeNormal", 2.0, "fan_in", "truncated_normal", seed); }
Initializer he_uniform(int64_t seed) { return named_scaling("HeUniform", 2.0, "fan_in", "uniform", seed); }
Initializer lecun_normal(int64_t seed) { return named_scaling("LecunNormal", 1.0, "fan_in", "truncated_normal", seed); }
Initializer lecun_uniform(int64_t seed) { return named_scaling("LecunUniform", 1.0, "fan_in", "uniform", seed); }

namespace {
using Factory = std::function<Initializer(const Json& config)>;
const std::map<std::string, std::pair<std::string, Factory>>& registry() {
  // snake_case name -> (class name, factory from config)
  static const std::map<std::string, std::pair<std::string, Factory>> r = {
      {"zeros", {"Zeros", [](const Json&) { return zeros(); }}},
      {"ones", {"Ones", [](const Json&) { return ones(); }}},
      {"constant", {"Constant", [](const Json& c) { return constant(c.get("value", 0.0).as_double()); }}},
      {"random_uniform", {"RandomUniform", [](const Json& c) {
         return random_uniform(c.get("minval", -0.05).as_double(), c.get("maxval", 0.05).as_double(), seed_from(c));
       }}},
      {"random_normal", {"RandomNormal", [](const Json& c) {
         return random_normal(c.get("mean", 0.0).as_double(), c.get("stddev", 0.05).as_double(), seed_from(c));
       }}},
      {"truncated_normal", {"TruncatedNormal", [](const Json& c) {
         return truncated_normal(c.get("mean", 0.0).as_double(), c.get("stddev", 0.05).as_double(), seed_from(c));
       }}},
      {"variance_scaling", {"VarianceScaling", [](const Json& c) {
         return variance_scaling(c.get("scale", 1.0).as_double(), c.get("mode", "fan_in").as_string(),
                                 c.get("distribution", "truncated_normal").as_string(), seed_from(c));
       }}},
      {"glorot_uniform", {"GlorotUniform", [](const Json& c) { return glorot_uniform(seed_from(c)); }}},
      {"glorot_normal", {"GlorotNormal", [](const Json& c) { return glorot_normal(seed_from(c)); }}},
      {"he_normal", {"HeNormal", [](const Json& c) { return he_normal(seed_from(c)); }}},
      {"he_uniform", {"HeUniform", [](const Json& c) { return he_uniform(seed_from(c)); }}},
      {"lecun_normal", {"LecunNormal", [](const Json& c) { return lecun_normal(seed_from(c)); }}},
      {"lecun_uniform", {"LecunUniform", [](const Json& c) { return lecun_uniform(seed_from(c)); }}},
  };
  return r;
}

Initializer make(const std::string& name, const Json& config) {
  for (const auto& [snake, entry] : registry()) {
    if (name == snake || name == entry.first) return entry.second(config);
  }
  std::string names;
  for (const auto& [snake, entry] : registry()) names += (names.empty() ? "" : ", ") + snake;
  throw ValueError("initializers: unknown initializer '" + name + "'; valid names: " + names);
}
}  // namespace

Initializer get(const std::string& name) { return make(name, Json::object()); }

Initializer from_json(const Json& json) {
  if (json.is_string()) return get(json.as_string());
  return make(json.at("class_name").as_string(), json.get("config", Json::object()));
}

}  // namespace initializers
}  // namespace strata
