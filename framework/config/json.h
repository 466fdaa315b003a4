// Json: a JSON value for Keras configs (get_config / from_config, model.to_json, training
// configs in checkpoints). A small value type over nlohmann::json kept behind a pointer so the
// heavy header stays out of Strata's public headers.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace strata {

class Json {
 public:
  Json();  // null
  Json(std::nullptr_t);  // NOLINT: implicit, like JSON literals
  Json(bool v);          // NOLINT
  Json(int v);           // NOLINT
  Json(int64_t v);       // NOLINT
  Json(double v);        // NOLINT
  Json(const char* v);   // NOLINT
  Json(const std::string& v);  // NOLINT
  Json(const std::vector<int64_t>& v);  // NOLINT: a JSON array of integers
  Json(const std::vector<std::string>& v);  // NOLINT
  ~Json();
  Json(const Json& other);
  Json(Json&& other) noexcept;
  Json& operator=(const Json& other);
  Json& operator=(Json&& other) noexcept;

  static Json object(std::initializer_list<std::pair<std::string, Json>> members = {});
  static Json array(std::initializer_list<Json> items = {});
  // Throws ValueError naming the position of the syntax error, or the limit when arrays and
  // objects nest deeper than kMaxDepth.
  static Json parse(const std::string& text);
  // How deep arrays and objects may nest in parsed text. Keras' configs nest a few dozen levels
  // (a model inside a model is four); the bound keeps hostile input from exhausting the stack
  // in the recursive code that later copies, compares, dumps and walks a value.
  static constexpr int kMaxDepth = 512;

  bool is_null() const;
  bool is_object() const;
  bool is_array() const;
  bool is_string() const;
  bool is_number() const;
  bool is_bool() const;

  // Objects. at() throws ValueError naming the missing key. get() returns `fallback` when the key
  // is missing or its value is null: Keras configs write None for "use the default"
  // ("mask_zero": null), so a null must read as the default, not fail to convert.
  bool contains(const std::string& key) const;
  Json at(const std::string& key) const;
  Json get(const std::string& key, const Json& fallback) const;
  void set(const std::string& key, const Json& value);
  std::vector<std::string> keys() const;  // in insertion order

  // Arrays.
  size_t size() const;
  Json at(size_t index) const;
  void push_back(const Json& value);

  // Conversions; throw ValueError naming the expected and actual JSON types.
  bool as_bool() const;
  int64_t as_int() const;
  double as_double() const;
  std::string as_string() const;
  std::vector<int64_t> as_int_vector() const;  // a number is read as a one-element vector
  std::vector<std::string> as_string_vector() const;

  // indent < 0: compact one line.
  std::string dump(int indent = -1) const;
  bool operator==(const Json& other) const;
  bool operator!=(const Json& other) const { return !(*this == other); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata
