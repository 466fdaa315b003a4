#include "framework/core/tensor_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace strata {
namespace {

constexpr int64_t kSummaryThreshold = 1000;  // numpy's threshold
constexpr int64_t kEdgeItems = 3;            // numpy's edgeitems
constexpr int kPrecision = 8;                // numpy's precision

// numpy's "maxprec" float mode: each value with up to 8 fractional digits, trailing zeros
// dropped; the whole array padded to one integer width and one fractional width.
struct FloatFormatter {
  bool scientific = false;
  bool single = false;  // float32/16/bf16: shortest digits that read back as the same float
  int int_width = 0, frac_width = 0;

  // Fewest digits (at most 8) that round-trip at the element type's precision, as numpy's
  // unique repr does.
  std::string shortest(double v, const char* conversion) const {
    char buf[64];
    for (int p = 0; p <= kPrecision; ++p) {
      std::snprintf(buf, sizeof buf, conversion, p, v);
      const double back = std::strtod(buf, nullptr);
      if (single ? float(back) == float(v) : back == v) break;
    }
    return buf;
  }
  std::string fixed(double v) const {
    std::string s = shortest(v, "%.*f");
    if (s.find('.') == std::string::npos) s += '.';
    while (s.back() == '0') s.pop_back();
    return s;  // keeps the '.'
  }
  std::string sci(double v) const {
    const std::string s = shortest(v, "%.*e");
    const size_t e = s.find('e');
    std::string mant = s.substr(0, e);
    const std::string ex = s.substr(e);
    if (mant.find('.') == std::string::npos) mant += '.';
    while (!mant.empty() && mant.back() == '0') mant.pop_back();
    return mant + ex;
  }
  static std::string special(double v) {  // NOLINT
    if (std::isnan(v)) return "nan";
    return v > 0 ? "inf" : "-inf";
  }

  FloatFormatter(const std::vector<double>& values, bool single_precision)
      : single(single_precision) {
    double max_abs = 0, min_abs = INFINITY;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      const double a = std::fabs(v);
      max_abs = std::max(max_abs, a);
      if (a > 0) min_abs = std::min(min_abs, a);
    }
    // numpy's rule over the non-zero finite magnitudes.
    scientific = max_abs >= 1e8 ||
                 (min_abs < INFINITY && (min_abs < 1e-4 || max_abs / min_abs > 1e3));
    for (double v : values) {
      if (!std::isfinite(v)) {
        int_width = std::max(int_width, int(special(v).size()));
        continue;
      }
      const std::string s = scientific ? sci(v) : fixed(v);
      const size_t dot = s.find('.');
      const size_t end = scientific ? s.find('e') : s.size();
      int_width = std::max(int_width, int(dot));
      frac_width = std::max(frac_width, int(end - dot - 1));
    }
  }

  std::string operator()(double v) const {
    if (!std::isfinite(v)) {
      std::string s = special(v);
      return std::string(size_t(std::max(0, int_width - int(s.size()))), ' ') + s +
             std::string(size_t(frac_width + 1), ' ');
    }
    std::string s = scientific ? sci(v) : fixed(v);
    const size_t dot = s.find('.');
    std::string mant = scientific ? s.substr(0, s.find('e')) : s;
    const std::string ex = scientific ? s.substr(s.find('e')) : "";
    const int frac = int(mant.size() - dot - 1);
    if (scientific) {
      mant += std::string(size_t(frac_width - frac), '0');
    } else {
      mant += std::string(size_t(frac_width - frac), ' ');
    }
    return std::string(size_t(std::max(0, int_width - int(dot))), ' ') + mant + ex;
  }
};

struct Printer {
  const Shape& shape;
  bool summarise;
  std::vector<std::string> cells;  // formatted value of every element, flat (empty if skipped)
  int width = 0;

  // Whether index i of an axis of size n is printed (and where "..." goes).
  bool shown(int64_t i, int64_t n) const {
    return !summarise || n <= 2 * kEdgeItems || i < kEdgeItems || i >= n - kEdgeItems;
  }

  void print(std::string& out, int axis, int64_t offset, int indent) const {
    if (shape.rank() == 0) {
      out += cells[0];
      return;
    }
    const int64_t n = shape[axis];
    int64_t stride = 1;
    for (int a = axis + 1; a < shape.rank(); ++a) stride *= shape[a];
    out += "[";
    bool first = true;
    for (int64_t i = 0; i < n; ++i) {
      if (!shown(i, n)) {
        if (i == kEdgeItems) {
          out += (axis == shape.rank() - 1)
                     ? " ..."
                     : std::string(size_t(shape.rank() - axis - 1), '\n') +
                           std::string(size_t(indent + 1), ' ') + "...";
        }
        continue;
      }
      if (!first) {
        if (axis == shape.rank() - 1) {
          out += " ";
        } else {
          out += std::string(size_t(shape.rank() - axis - 1), '\n') + std::string(size_t(indent + 1), ' ');
        }
      } else if (i > 0 && axis == shape.rank() - 1) {
        out += " ";
      }
      first = false;
      if (axis == shape.rank() - 1) {
        const std::string& c = cells[size_t(offset + i)];
        out += std::string(size_t(std::max(0, width - int(c.size()))), ' ') + c;
      } else {
        print(out, axis + 1, offset + i * stride, indent + 1);
      }
    }
    out += "]";
  }
};

}  // namespace

std::string format_tensor(const Tensor& t) {
  const Tensor host = t.to(Device::cpu());
  const int64_t n = host.numel();
  const bool summarise = n > kSummaryThreshold;
  Printer p{host.shape(), summarise, {}, 0};
  if (n == 0) return "[]";

  // Which flat indices are visible.
  std::vector<bool> visible(size_t(n), true);
  if (summarise) {
    const std::vector<int64_t> strides = host.shape().strides();
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i;
      for (int a = 0; a < host.rank(); ++a) {
        const int64_t idx = rem / strides[size_t(a)];
        rem %= strides[size_t(a)];
        if (!p.shown(idx, host.shape()[a])) { visible[size_t(i)] = false; break; }
      }
    }
  }
  p.cells.assign(size_t(n), std::string());
  const DType dt = host.dtype();
  if (is_floating(dt)) {
    const std::vector<double> v = host.to_vector<double>();
    std::vector<double> shown_values;
    for (int64_t i = 0; i < n; ++i) if (visible[size_t(i)]) shown_values.push_back(v[size_t(i)]);
    FloatFormatter f(shown_values, dt != DType::kFloat64);
    for (int64_t i = 0; i < n; ++i) if (visible[size_t(i)]) p.cells[size_t(i)] = f(v[size_t(i)]);
  } else if (dt == DType::kBool) {
    const std::vector<bool> v = host.to_vector<bool>();
    for (int64_t i = 0; i < n; ++i) if (visible[size_t(i)]) p.cells[size_t(i)] = v[size_t(i)] ? "True" : "False";
  } else {
    const std::vector<int64_t> v = host.to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i) if (visible[size_t(i)]) p.cells[size_t(i)] = std::to_string(v[size_t(i)]);
  }
  for (const std::string& c : p.cells) p.width = std::max(p.width, int(c.size()));
  std::string out;
  p.print(out, 0, 0, 0);
  return out;
}

}  // namespace strata
