#include "layers/preprocessing/random_translation.h"

#include <cmath>

namespace strata {

namespace {
enum Fill { kReflect, kWrap, kNearest, kConstant };

void check_range(const RandomTranslation::Range& r, const char* what) {
  if (!(r.first <= r.second)) {
    throw ValueError(std::string("RandomTranslation: `") + what + "` cannot have upper bound "
                     "less than lower bound, got " + std::to_string(r.first) + ", " +
                     std::to_string(r.second));
  }
  if (std::abs(r.first) > 1.0 || std::abs(r.second) > 1.0) {
    throw ValueError(std::string("RandomTranslation: `") + what + "` must have values between "
                     "[-1, 1], got " + std::to_string(r.first) + ", " + std::to_string(r.second));
  }
}

// The source index for an integer position `i` of an axis of length `len`; -1 means "use the
// fill value" (constant mode).
int64_t map_index(int64_t i, int64_t len, int fill) {
  if (i >= 0 && i < len) return i;
  switch (fill) {
    case kReflect: {
      const int64_t period = 2 * len;
      int64_t m = i % period;
      if (m < 0) m += period;
      return m < len ? m : period - 1 - m;
    }
    case kWrap: {
      int64_t m = i % len;
      return m < 0 ? m + len : m;
    }
    case kNearest:
      return i < 0 ? 0 : len - 1;
    default:
      return -1;
  }
}

// Sampling positions of one axis shifted by `shift` pixels: output o reads source o - shift,
// linearly between two neighbours (or the nearest one).
struct AxisTaps {
  std::vector<int64_t> i0, i1;
  float w1 = 0;  // weight of i1; the same for every position since the shift is uniform
};
AxisTaps axis_taps(int64_t len, double shift, bool bilinear, int fill) {
  AxisTaps t;
  t.i0.resize(size_t(len));
  t.i1.resize(size_t(len));
  const double base = -shift;
  double f0 = bilinear ? std::floor(base) : std::round(base);
  t.w1 = bilinear ? float(base - f0) : 0.f;
  for (int64_t o = 0; o < len; ++o) {
    t.i0[size_t(o)] = map_index(o + int64_t(f0), len, fill);
    t.i1[size_t(o)] = map_index(o + int64_t(f0) + 1, len, fill);
  }
  return t;
}
}  // namespace

RandomTranslation::RandomTranslation(Factor h, Factor w, const RandomTranslationOptions& o)
    : Layer("random_translation", o.name_),
      height_(h.range), width_(w.range), height_scalar_(h.scalar), width_scalar_(w.scalar),
      options_(o), random_(o.seed_) {
  check_range(height_, "height_factor");
  check_range(width_, "width_factor");
  const std::string& m = options_.fill_mode_;
  fill_ = m == "reflect" ? kReflect : m == "wrap" ? kWrap : m == "nearest" ? kNearest
        : m == "constant" ? kConstant : -1;
  if (fill_ < 0) {
    throw ValueError("RandomTranslation: unknown fill_mode \"" + m + "\"; expected one of "
                     "\"reflect\", \"wrap\", \"constant\", \"nearest\"");
  }
  if (options_.interpolation_ != "bilinear" && options_.interpolation_ != "nearest") {
    throw ValueError("RandomTranslation: unknown interpolation \"" + options_.interpolation_ +
                     "\"; expected \"bilinear\" or \"nearest\"");
  }
}

Tensor RandomTranslation::call(const Tensor& x, bool training) {
  if (!training) return x;
  const preprocessing::ImageBatch b =
      preprocessing::to_image_batch(x, "RandomTranslation '" + name() + "'");
  const std::vector<double> u = random_.uniform(size_t(2 * b.n));
  const bool bilinear = options_.interpolation_ == "bilinear";
  const float fill_value = float(options_.fill_value_);
  Tensor y = Tensor::empty(b.data.shape(), float32);
  const float* src = b.data.data<float>();
  float* dst = y.data<float>();
  const int64_t C = b.c;
  for (int64_t n = 0; n < b.n; ++n) {
    const double dy = (height_.first + u[size_t(2 * n)] * (height_.second - height_.first)) * double(b.h);
    const double dx = (width_.first + u[size_t(2 * n + 1)] * (width_.second - width_.first)) * double(b.w);
    const AxisTaps ty = axis_taps(b.h, dy, bilinear, fill_);
    const AxisTaps tx = axis_taps(b.w, dx, bilinear, fill_);
    const float* img = src + n * b.h * b.w * C;
    float* out = dst + n * b.h * b.w * C;
    // A pixel read with the fill rule: null means the constant fill value.
    auto px = [&](int64_t r, int64_t c) -> const float* {
      return r < 0 || c < 0 ? nullptr : img + (r * b.w + c) * C;
    };
    for (int64_t i = 0; i < b.h; ++i) {
      const int64_t r0 = ty.i0[size_t(i)], r1 = ty.i1[size_t(i)];
      for (int64_t j = 0; j < b.w; ++j) {
        const int64_t c0 = tx.i0[size_t(j)], c1 = tx.i1[size_t(j)];
        const float* p00 = px(r0, c0);
        float* o = out + (i * b.w + j) * C;
        if (ty.w1 == 0.f && tx.w1 == 0.f) {  // integer shift (or nearest): a plain copy
          for (int64_t k = 0; k < C; ++k) o[k] = p00 ? p00[k] : fill_value;
          continue;
        }
        const float* p01 = px(r0, c1);
        const float* p10 = px(r1, c0);
        const float* p11 = px(r1, c1);
        const float wy = ty.w1, wx = tx.w1;
        for (int64_t k = 0; k < C; ++k) {
          const float v00 = p00 ? p00[k] : fill_value, v01 = p01 ? p01[k] : fill_value;
          const float v10 = p10 ? p10[k] : fill_value, v11 = p11 ? p11[k] : fill_value;
          o[k] = (1 - wy) * ((1 - wx) * v00 + wx * v01) + wy * ((1 - wx) * v10 + wx * v11);
        }
      }
    }
  }
  return preprocessing::from_image_batch(y, b);
}

Json RandomTranslation::get_config() const {
  Json c = Layer::get_config();
  auto factor = [](const Range& r, bool scalar) {
    return scalar ? Json(r.second) : preprocessing::doubles_to_json({r.first, r.second});
  };
  c.set("height_factor", factor(height_, height_scalar_));
  c.set("width_factor", factor(width_, width_scalar_));
  c.set("fill_mode", options_.fill_mode_);
  c.set("interpolation", options_.interpolation_);
  c.set("seed", preprocessing::seed_to_json(random_.seed()));
  c.set("fill_value", options_.fill_value_);
  c.set("data_format", "channels_last");
  return c;
}

std::shared_ptr<Layer> RandomTranslation::from_config(const Json& c) {
  preprocessing::check_channels_last(c, "RandomTranslation");
  RandomTranslationOptions o;
  o.name(c.get("name", "").as_string())
      .fill_mode(c.get("fill_mode", "reflect").as_string())
      .interpolation(c.get("interpolation", "bilinear").as_string())
      .fill_value(c.get("fill_value", 0.0).as_double())
      .seed(preprocessing::seed_from_json(c));
  auto factor = [](const Json& j, const char* what) -> Factor {
    if (j.is_number()) return Factor(j.as_double());
    const std::vector<double> v = preprocessing::doubles_from_json(j);
    if (v.size() != 2) {
      throw ValueError(std::string("RandomTranslation: `") + what + "` must be a number or a "
                       "pair [lower, upper], got " + j.dump());
    }
    return Factor(Range{v[0], v[1]});
  };
  auto layer = std::make_shared<RandomTranslation>(factor(c.at("height_factor"), "height_factor"),
                                                   factor(c.at("width_factor"), "width_factor"), o);
  if (!c.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

}  // namespace strata
