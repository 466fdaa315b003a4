// Python's str.format for file-name templates, as Keras' ModelCheckpoint uses it:
//
//   FilepathTemplate t("ckpt-{epoch:02d}-{val_loss:.2f}.h5");
//   t.format({{"epoch", int64_t{3}}, {"val_loss", 0.41234}});   // "ckpt-03-0.41.h5"
//
// Fields are named only ({epoch}, {val_loss}); "{{" and "}}" are literal braces. A field's format
// spec follows Python's mini-language: [[fill]align][sign][0][width][,|_][.precision][type] with
// the types d (integers only, as in Python), e E f F g G % and none. Positional fields ({}, {0}),
// attribute/index access ({a.b}, {a[0]}), conversions (!r) and nested fields ({x:{w}}) are
// rejected with a ValueError when the template is built, so a bad template fails before training.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace strata {

// A value as Python sees it: epoch and batch numbers are ints, log values are floats. The
// difference matters: {loss:02d} is an error in Python and here, {epoch:.1f} is fine.
using FormatValue = std::variant<int64_t, double>;
// Named values in the order an error message should list them.
using FormatFields = std::vector<std::pair<std::string, FormatValue>>;

// repr(float) in Python 3: the shortest digits that round-trip, fixed notation for
// 1e-4 <= |x| < 1e16 (with ".0" when integral), else "1e-05" / "1.5e+16"; "nan", "inf", "-inf".
std::string python_float_repr(double value);

// format(value, spec) in Python, e.g. format_value(0.41234, ".2f") == "0.41". ValueError for a
// malformed spec or one that does not fit the value's type.
std::string format_value(const FormatValue& value, const std::string& spec);

class FilepathTemplate {
 public:
  // ValueError naming the template and the position for malformed or unsupported syntax.
  explicit FilepathTemplate(std::string pattern);

  // The template with every field replaced. ValueError naming the field and the keys available
  // when a field has no value, or when its spec does not fit its value.
  std::string format(const FormatFields& fields) const;

  const std::string& pattern() const { return pattern_; }
  // The field names in template order (repeats included).
  std::vector<std::string> field_names() const;

 private:
  struct Piece {
    std::string text;  // literal text, or the field name when is_field
    std::string spec;  // the format spec of a field ("" when none)
    bool is_field = false;
  };
  std::string pattern_;
  std::vector<Piece> pieces_;
};

}  // namespace strata
