#include "framework/config/json.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"

namespace strata {

// ordered_json keeps keys in insertion order, as Keras' configs read.
struct Json::Impl {
  nlohmann::ordered_json value;
};

namespace {
std::string type_name(const nlohmann::ordered_json& j) { return j.type_name(); }

[[noreturn]] void wrong_type(const char* expected, const nlohmann::ordered_json& j) {
  throw ValueError(std::string("json: expected ") + expected + ", got " + type_name(j) + " " +
                   j.dump().substr(0, 80));
}

// The byte offset where arrays and objects first nest deeper than `limit`, or npos. A linear
// scan that skips strings; syntax errors are left to the parser, since a malformed text can
// only make this count wrongly where the parser will reject the text anyway.
size_t too_deep_at(const std::string& text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string::npos;
}

}  // namespace

Json::Json() : impl_(std::make_unique<Impl>()) {}
Json::Json(std::nullptr_t) : Json() {}
Json::Json(bool v) : Json() { impl_->value = v; }
Json::Json(int v) : Json() { impl_->value = v; }
Json::Json(int64_t v) : Json() { impl_->value = v; }
Json::Json(double v) : Json() { impl_->value = v; }
Json::Json(const char* v) : Json() { impl_->value = std::string(v); }
Json::Json(const std::string& v) : Json() { impl_->value = v; }
Json::Json(const std::vector<int64_t>& v) : Json() { impl_->value = v; }
Json::Json(const std::vector<std::string>& v) : Json() { impl_->value = v; }
Json::~Json() = default;
Json::Json(const Json& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
// A moved-from Json is null, never empty inside.
Json::Json(Json&& other) noexcept : impl_(std::make_unique<Impl>()) { impl_.swap(other.impl_); }
Json& Json::operator=(const Json& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Json& Json::operator=(Json&& other) noexcept {
  impl_.swap(other.impl_);
  return *this;
}

Json Json::object(std::initializer_list<std::pair<std::string, Json>> members) {
  Json j;
  j.impl_->value = nlohmann::ordered_json::object();
  for (const auto& [k, v] : members) j.impl_->value[k] = v.impl_->value;
  return j;
}

Json Json::array(std::initializer_list<Json> items) {
  Json j;
  j.impl_->value = nlohmann::ordered_json::array();
  for (const Json& v : items) j.impl_->value.push_back(v.impl_->value);
  return j;
}

Json Json::parse(const std::string& text) {
  // Checked before parsing: nlohmann's parser itself is iterative, but everything done with the
  // value afterwards (copies, dump() in error messages, from_config) recurses once per level,
  // and ~70,000 levels overflow the stack.
  const size_t deep = too_deep_at(text, kMaxDepth);
  if (deep != std::string::npos) {
    throw ValueError("json: cannot parse: arrays and objects nest deeper than " +
                     std::to_string(kMaxDepth) + " levels (at byte " + std::to_string(deep) +
                     " of " + std::to_string(text.size()) + "); no Keras config nests nearly "
                     "that deep, so the text is corrupt or hostile");
  }
  Json j;
  try {
    j.impl_->value = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(std::string("json: cannot parse: ") + e.what());
  }
  return j;
}

bool Json::is_null() const { return impl_->value.is_null(); }
bool Json::is_object() const { return impl_->value.is_object(); }
bool Json::is_array() const { return impl_->value.is_array(); }
bool Json::is_string() const { return impl_->value.is_string(); }
bool Json::is_number() const { return impl_->value.is_number(); }
bool Json::is_bool() const { return impl_->value.is_boolean(); }

bool Json::contains(const std::string& key) const {
  return impl_->value.is_object() && impl_->value.contains(key);
}

Json Json::at(const std::string& key) const {
  if (!impl_->value.is_object()) wrong_type("an object", impl_->value);
  auto it = impl_->value.find(key);
  if (it == impl_->value.end()) {
    throw ValueError("json: missing key '" + key + "' in " + impl_->value.dump().substr(0, 120));
  }
  Json j;
  j.impl_->value = *it;
  return j;
}

Json Json::get(const std::string& key, const Json& fallback) const {
  if (!contains(key)) return fallback;
  Json value = at(key);
  return value.is_null() ? fallback : value;
}

void Json::set(const std::string& key, const Json& value) {
  if (impl_->value.is_null()) impl_->value = nlohmann::ordered_json::object();
  if (!impl_->value.is_object()) wrong_type("an object", impl_->value);
  impl_->value[key] = value.impl_->value;
}

std::vector<std::string> Json::keys() const {
  std::vector<std::string> out;
  if (!impl_->value.is_object()) return out;
  for (auto it = impl_->value.begin(); it != impl_->value.end(); ++it) out.push_back(it.key());
  return out;
}

size_t Json::size() const {
  return impl_->value.is_array() || impl_->value.is_object() ? impl_->value.size() : 0;
}

Json Json::at(size_t index) const {
  if (!impl_->value.is_array()) wrong_type("an array", impl_->value);
  if (index >= impl_->value.size()) {
    throw IndexError("json: index " + std::to_string(index) + " out of range for an array of " +
                     std::to_string(impl_->value.size()));
  }
  Json j;
  j.impl_->value = impl_->value[index];
  return j;
}

void Json::push_back(const Json& value) {
  if (impl_->value.is_null()) impl_->value = nlohmann::ordered_json::array();
  if (!impl_->value.is_array()) wrong_type("an array", impl_->value);
  impl_->value.push_back(value.impl_->value);
}

bool Json::as_bool() const {
  if (!impl_->value.is_boolean()) wrong_type("a boolean", impl_->value);
  return impl_->value.get<bool>();
}

int64_t Json::as_int() const {
  if (impl_->value.is_number_unsigned()) {
    // Above INT64_MAX the conversion would wrap to a negative count.
    const uint64_t u = impl_->value.get<uint64_t>();
    if (u <= uint64_t(std::numeric_limits<int64_t>::max())) return int64_t(u);
    wrong_type("an integer in the 64-bit signed range", impl_->value);
  }
  if (impl_->value.is_number_integer()) return impl_->value.get<int64_t>();
  if (impl_->value.is_number_float()) {
    // Keras configs written by Python may spell integers as 4.0. Converting a double outside
    // [-2^63, 2^63) (or NaN) to int64_t is undefined, so the range is checked first.
    const double d = impl_->value.get<double>();
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == std::trunc(d))
      return int64_t(d);
  }
  wrong_type("an integer", impl_->value);
}

double Json::as_double() const {
  if (!impl_->value.is_number()) wrong_type("a number", impl_->value);
  return impl_->value.get<double>();
}

std::string Json::as_string() const {
  if (!impl_->value.is_string()) wrong_type("a string", impl_->value);
  return impl_->value.get<std::string>();
}

std::vector<int64_t> Json::as_int_vector() const {
  if (impl_->value.is_number()) return {as_int()};
  if (!impl_->value.is_array()) wrong_type("an array of integers", impl_->value);
  std::vector<int64_t> out;
  for (size_t i = 0; i < size(); ++i) out.push_back(at(i).as_int());
  return out;
}

std::vector<std::string> Json::as_string_vector() const {
  if (!impl_->value.is_array()) wrong_type("an array of strings", impl_->value);
  std::vector<std::string> out;
  for (size_t i = 0; i < size(); ++i) out.push_back(at(i).as_string());
  return out;
}

std::string Json::dump(int indent) const { return impl_->value.dump(indent); }

bool Json::operator==(const Json& other) const { return impl_->value == other.impl_->value; }

}  // namespace strata
