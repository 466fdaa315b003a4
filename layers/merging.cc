#include "layers/merging.h"

#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"
#include "layers/layer_utils.h"

namespace strata {

using namespace layer_utils;

namespace {
std::string shapes_string(const std::vector<Shape>& shapes) {
  std::string s;
  for (const Shape& sh : shapes) s += (s.empty() ? "" : ", ") + sh.to_string();
  return s;
}

std::vector<Shape> shapes_of(const std::vector<Tensor>& xs) {
  std::vector<Shape> s;
  for (const Tensor& x : xs) s.push_back(x.shape());
  return s;
}

void check_count(const Layer& layer, size_t got, size_t exact) {
  if (exact ? got != exact : got < 2) {
    throw ValueError(describe(layer) + ": expects " +
                     (exact ? "exactly " + std::to_string(exact) : std::string("a list of at least 2")) +
                     " inputs, got " + std::to_string(got));
  }
}
}  // namespace

// ---- Add / Subtract / Multiply ----

void ElementwiseMerge::check_shapes(const std::vector<Shape>& shapes) const {
  check_count(*this, shapes.size(), exact_inputs());
  try {
    Shape out = shapes[0];
    for (size_t i = 1; i < shapes.size(); ++i) out = broadcast_shapes(out, shapes[i], "merge");
  } catch (const ShapeError&) {
    throw ShapeError(describe(*this) + ": inputs have incompatible shapes " + shapes_string(shapes));
  }
}

void ElementwiseMerge::build_multi(const std::vector<Shape>& shapes) { check_shapes(shapes); }

Tensor ElementwiseMerge::call_multi(const std::vector<Tensor>& xs, bool) {
  check_shapes(shapes_of(xs));
  return merge(xs);
}

Tensor Add::merge(const std::vector<Tensor>& xs) const {
  Tensor y = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) y = y + xs[i];
  return y;
}

Tensor Add::call_fused_relu(const std::vector<Tensor>& xs, bool) {
  check_shapes(shapes_of(xs));
  Tensor partial = xs[0];
  for (size_t i = 1; i + 1 < xs.size(); ++i) partial = partial + xs[i];
  return add_relu(partial, xs.back());
}

Tensor Subtract::merge(const std::vector<Tensor>& xs) const { return xs[0] - xs[1]; }

Tensor Multiply::merge(const std::vector<Tensor>& xs) const {
  Tensor y = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) y = y * xs[i];
  return y;
}

std::shared_ptr<Layer> Add::from_config(const Json& c) {
  return finish_from_config(std::make_shared<Add>(c.get("name", "").as_string()), c);
}
std::shared_ptr<Layer> Subtract::from_config(const Json& c) {
  return finish_from_config(std::make_shared<Subtract>(c.get("name", "").as_string()), c);
}
std::shared_ptr<Layer> Multiply::from_config(const Json& c) {
  return finish_from_config(std::make_shared<Multiply>(c.get("name", "").as_string()), c);
}

// ---- Concatenate ----

Concatenate::Concatenate(int axis, const std::string& name) : Layer("concatenate", name), axis_(axis) {}

void Concatenate::check_shapes(const std::vector<Shape>& shapes) const {
  check_count(*this, shapes.size(), 0);
  const int rank = shapes[0].rank();
  const int axis = axis_ < 0 ? axis_ + rank : axis_;
  if (axis < 1 || axis >= rank) {
    throw ValueError(describe(*this) + ": axis " + std::to_string(axis_) +
                     " is out of range (or the batch axis) for inputs " + shapes_string(shapes));
  }
  for (const Shape& s : shapes) {
    bool ok = s.rank() == rank;
    for (int i = 0; ok && i < rank; ++i) ok = i == axis || s[i] == shapes[0][i];
    if (!ok) {
      throw ShapeError(describe(*this) + ": inputs must match on every axis except the "
                       "concatenation axis " + std::to_string(axis_) + ", got " + shapes_string(shapes));
    }
  }
}

void Concatenate::build_multi(const std::vector<Shape>& shapes) { check_shapes(shapes); }

Tensor Concatenate::call_multi(const std::vector<Tensor>& xs, bool) {
  check_shapes(shapes_of(xs));
  return concat(xs, axis_ < 0 ? axis_ + xs[0].rank() : axis_);
}

Json Concatenate::get_config() const {
  Json c = Layer::get_config();
  c.set("axis", axis_);
  return c;
}

std::shared_ptr<Layer> Concatenate::from_config(const Json& c) {
  return finish_from_config(
      std::make_shared<Concatenate>(int(c.get("axis", -1).as_int()), c.get("name", "").as_string()), c);
}

}  // namespace strata
