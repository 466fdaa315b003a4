#include "framework/callbacks/filepath_format.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "framework/core/error.h"

namespace strata {
namespace {

// A parsed Python format spec.
struct Spec {
  char fill = ' ';
  bool fill_given = false;
  char align = 0;  // 0: the default, right-aligned for numbers
  char sign = '-';
  int width = 0;
  char grouping = 0;
  int precision = -1;  // -1: not given
  char type = 0;       // 0: none
};

[[noreturn]] void bad_spec(const std::string& spec, const std::string& why) {
  throw ValueError("invalid format spec \"" + spec + "\": " + why);
}

bool is_align(char c) { return c == '<' || c == '>' || c == '=' || c == '^'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

int parse_number(const std::string& s, size_t& i) {
  int v = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    v = v * 10 + (s[i] - '0');
    // A cap keeps the buffers below bounded; no file name needs more.
    if (v > 1000) bad_spec(s, "width and precision must be at most 1000");
  }
  return v;
}

Spec parse_spec(const std::string& s) {
  Spec sp;
  size_t i = 0;
  if (s.size() >= 2 && is_align(s[1])) {
    sp.fill = s[0];
    sp.fill_given = true;
    sp.align = s[1];
    i = 2;
  } else if (!s.empty() && is_align(s[0])) {
    sp.align = s[0];
    i = 1;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) sp.sign = s[i++];
  if (i < s.size() && (s[i] == '#' || s[i] == 'z')) {
    bad_spec(s, std::string("the '") + s[i] + "' option is not supported");
  }
  // Python: a '0' before the width means zero fill, sign-aware unless an alignment is given.
  if (i < s.size() && s[i] == '0') {
    ++i;
    if (!sp.fill_given) sp.fill = '0';
    if (!sp.align) sp.align = '=';
  }
  if (i < s.size() && is_digit(s[i])) sp.width = parse_number(s, i);
  if (i < s.size() && (s[i] == ',' || s[i] == '_')) sp.grouping = s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (i >= s.size() || !is_digit(s[i])) bad_spec(s, "'.' must be followed by a precision");
    sp.precision = parse_number(s, i);
  }
  if (i < s.size()) sp.type = s[i++];
  if (i < s.size() || (sp.type && std::string("deEfFgG%").find(sp.type) == std::string::npos)) {
    bad_spec(s,
             "expected [[fill]align][sign][0][width][,|_][.precision][type] with type one of "
             "d e E f F g G % (or none)");
  }
  if (sp.grouping && sp.fill == '0' && sp.align == '=') {
    bad_spec(s, "zero padding together with a grouping separator is not supported");
  }
  return sp;
}

// The decimal digits of `a` (> 0, finite) without trailing zeros, and the position of the
// decimal point relative to the first digit (decpt: 1234.5 -> "12345", 4). `sig` significant
// digits, or the shortest round-trip digits when sig is 0.
void decimal_digits(double a, int sig, std::string& digits, int& decpt) {
  char buf[64];
  auto r = sig > 0 ? std::to_chars(buf, buf + sizeof buf, a, std::chars_format::scientific, sig - 1)
                   : std::to_chars(buf, buf + sizeof buf, a, std::chars_format::scientific);
  const std::string s(buf, r.ptr);  // "d.ddde+XX"
  const size_t e = s.find('e');
  digits.clear();
  for (size_t i = 0; i < e; ++i) {
    if (s[i] != '.') digits += s[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  decpt = std::atoi(s.c_str() + e + 1) + 1;
}

// Digits placed in fixed or exponent notation the way Python's float formatting does.
std::string place_digits(const std::string& digits, int decpt, bool use_exp, bool add_dot_0) {
  if (use_exp) {
    std::string out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int e = decpt - 1;
    std::string ed = std::to_string(std::abs(e));
    if (ed.size() < 2) ed = "0" + ed;
    return out + (e < 0 ? "e-" : "e+") + ed;
  }
  if (decpt <= 0) return "0." + std::string(size_t(-decpt), '0') + digits;
  if (decpt >= int(digits.size())) {
    return digits + std::string(size_t(decpt) - digits.size(), '0') + (add_dot_0 ? ".0" : "");
  }
  return digits.substr(0, size_t(decpt)) + "." + digits.substr(size_t(decpt));
}

// Python's 'g' (add_dot_0 false) and its no-type-with-precision variant (add_dot_0 true).
std::string general(double a, int precision, bool add_dot_0) {
  const int p = precision == 0 ? 1 : precision;
  if (a == 0.0) return add_dot_0 ? "0.0" : "0";
  std::string digits;
  int decpt = 0;
  decimal_digits(a, p, digits, decpt);
  const bool use_exp = decpt <= -4 || decpt > (add_dot_0 ? p - 1 : p);
  return place_digits(digits, decpt, use_exp, add_dot_0);
}

std::string fixed_or_exp(double a, std::chars_format fmt, int precision) {
  std::string buf(size_t(400 + precision), '\0');
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), a, fmt, precision);
  buf.resize(size_t(r.ptr - buf.data()));
  return buf;
}

// The digits of a non-negative magnitude, before sign and padding.
std::string float_body(double a, const Spec& sp) {
  const bool upper = sp.type == 'E' || sp.type == 'F' || sp.type == 'G';
  std::string body;
  if (std::isnan(a) || std::isinf(a)) {
    body = std::isnan(a) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
    return sp.type == '%' ? body + "%" : body;
  }
  const int p = sp.precision;
  switch (sp.type) {
    case 'f':
    case 'F':
      return fixed_or_exp(a, std::chars_format::fixed, p < 0 ? 6 : p);
    case '%':
      return fixed_or_exp(a * 100.0, std::chars_format::fixed, p < 0 ? 6 : p) + "%";
    case 'e':
    case 'E':
      body = fixed_or_exp(a, std::chars_format::scientific, p < 0 ? 6 : p);
      break;
    case 'g':
    case 'G':
      body = general(a, p < 0 ? 6 : p, false);
      break;
    default:
      return p < 0 ? python_float_repr(a) : general(a, p, true);
  }
  if (upper) {
    for (char& c : body) c = char(std::toupper(static_cast<unsigned char>(c)));
  }
  return body;
}

// Inserts the separator every three digits in the leading run of digits.
std::string group(const std::string& body, char sep) {
  size_t n = 0;
  while (n < body.size() && is_digit(body[n])) ++n;
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += sep;
    out += body[i];
  }
  return out + body.substr(n);
}

std::string pad(const std::string& sign, const std::string& body, const Spec& sp) {
  const size_t len = sign.size() + body.size();
  if (size_t(sp.width) <= len) return sign + body;
  const size_t n = size_t(sp.width) - len;
  switch (sp.align ? sp.align : '>') {
    case '<':
      return sign + body + std::string(n, sp.fill);
    case '^':
      return std::string(n / 2, sp.fill) + sign + body + std::string(n - n / 2, sp.fill);
    case '=':
      return sign + std::string(n, sp.fill) + body;
    default:
      return std::string(n, sp.fill) + sign + body;
  }
}

std::string sign_of(bool negative, const Spec& sp) {
  if (negative) return "-";
  return sp.sign == '-' ? "" : std::string(1, sp.sign);
}

}  // namespace

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  const std::string sign = std::signbit(value) ? "-" : "";
  if (value == 0.0) return sign + "0.0";
  std::string digits;
  int decpt = 0;
  decimal_digits(std::fabs(value), 0, digits, decpt);
  return sign + place_digits(digits, decpt, decpt <= -4 || decpt > 16, true);
}

std::string format_value(const FormatValue& value, const std::string& spec) {
  const Spec sp = parse_spec(spec);
  if (const int64_t* i = std::get_if<int64_t>(&value); i && (sp.type == 0 || sp.type == 'd')) {
    if (sp.precision >= 0) bad_spec(spec, "a precision is not allowed for an integer");
    // Unsigned negation: defined for INT64_MIN too.
    const uint64_t magnitude = *i < 0 ? 0 - uint64_t(*i) : uint64_t(*i);
    std::string body = std::to_string(magnitude);
    if (sp.grouping) body = group(body, sp.grouping);
    return pad(sign_of(*i < 0, sp), body, sp);
  }
  if (sp.type == 'd') {
    bad_spec(spec, "format code 'd' is for integers, but the value is a float (use e.g. .2f)");
  }
  // Python formats an int with a float type as the float of the same value.
  const double v = std::holds_alternative<double>(value) ? std::get<double>(value)
                                                         : double(std::get<int64_t>(value));
  std::string body = float_body(std::fabs(v), sp);
  if (sp.grouping) body = group(body, sp.grouping);
  return pad(sign_of(std::signbit(v) && !std::isnan(v), sp), body, sp);
}

// ---- FilepathTemplate ----

FilepathTemplate::FilepathTemplate(std::string pattern) : pattern_(std::move(pattern)) {
  const std::string& p = pattern_;
  auto fail = [&](size_t at, const std::string& why) {
    throw ValueError("filepath template \"" + p + "\": " + why + " (at character " +
                     std::to_string(at) + ")");
  };
  std::string literal;
  size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    if ((c == '{' || c == '}') && i + 1 < p.size() && p[i + 1] == c) {  // "{{" / "}}"
      literal += c;
      i += 2;
      continue;
    }
    if (c == '}') fail(i, "single '}' (write '}}' for a literal brace)");
    if (c != '{') {
      literal += c;
      ++i;
      continue;
    }
    const size_t close = p.find_first_of("{}", i + 1);
    if (close == std::string::npos)
      fail(i, "'{' has no matching '}' (write '{{' for a literal brace)");
    if (p[close] == '{') fail(close, "nested fields such as {x:{w}} are not supported");
    const std::string field = p.substr(i + 1, close - i - 1);
    const size_t colon = field.find(':');
    const size_t bang = field.find('!');
    if (bang < colon) fail(i, "conversions such as {x!r} are not supported");
    Piece piece;
    piece.is_field = true;
    piece.text = field.substr(0, colon);
    piece.spec = colon == std::string::npos ? "" : field.substr(colon + 1);
    const std::string& name = piece.text;
    if (name.empty() || name.find_first_not_of("0123456789") == std::string::npos) {
      fail(i,
           "positional fields ({} or {0}) are not supported; name a value: {epoch}, {batch} "
           "or a log key such as {val_loss}");
    }
    if (name.find_first_of(".[]") != std::string::npos) {
      fail(i, "attribute and index access ({a.b}, {a[0]}) are not supported in {" + name + "}");
    }
    try {
      parse_spec(piece.spec);
    } catch (const ValueError& e) {
      fail(i, "field {" + field + "}: " + e.what());
    }
    if (!literal.empty()) pieces_.push_back({literal, "", false});
    literal.clear();
    pieces_.push_back(std::move(piece));
    i = close + 1;
  }
  if (!literal.empty()) pieces_.push_back({literal, "", false});
}

std::string FilepathTemplate::format(const FormatFields& fields) const {
  std::string out;
  for (const Piece& piece : pieces_) {
    if (!piece.is_field) {
      out += piece.text;
      continue;
    }
    const FormatValue* value = nullptr;
    for (const auto& [k, v] : fields) {
      if (k == piece.text) {
        value = &v;
        break;
      }
    }
    if (!value) {
      std::string keys;
      for (const auto& [k, v] : fields) keys += (keys.empty() ? "" : ", ") + k;
      throw ValueError("filepath template \"" + pattern_ + "\": no value for the field {" +
                       piece.text + "}; available: " + (keys.empty() ? "none" : keys));
    }
    try {
      out += format_value(*value, piece.spec);
    } catch (const ValueError& e) {
      throw ValueError("filepath template \"" + pattern_ + "\": field {" + piece.text + ":" +
                       piece.spec + "}: " + e.what());
    }
  }
  return out;
}

std::vector<std::string> FilepathTemplate::field_names() const {
  std::vector<std::string> names;
  for (const Piece& piece : pieces_) {
    if (piece.is_field) names.push_back(piece.text);
  }
  return names;
}

}  // namespace strata
