#include "framework/model/sequential.h"

#include "framework/autograd/grad_mode.h"
#include "framework/model/batch_axis.h"
#include "framework/ops/creation.h"

namespace strata {

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers, const std::string& name)
    : Model(name.empty() ? unique_layer_name("sequential") : name) {
  set_autocast_inputs(false);  // each layer casts its own inputs (a float32 layer stays float32)
  for (auto& l : layers) add(std::move(l));
}

void Sequential::add(std::shared_ptr<Layer> layer) {
  if (!layer) throw ValueError("Sequential.add: layer is null");
  for (const auto& l : layers_) {
    if (l->name() == layer->name()) {
      throw ValueError("Sequential.add: a layer named '" + layer->name() + "' is already in '" +
                       name() + "'; layer names must be unique");
    }
  }
  track_layer(layer);
  layers_.push_back(std::move(layer));
}

void Sequential::pop() {
  if (layers_.empty()) throw ValueError("Sequential.pop: '" + name() + "' has no layers to remove");
  layers_.pop_back();
}

void Sequential::build(const Shape& input_shape) {
  if (layers_.empty()) throw ValueError("Sequential '" + name() + "': has no layers; add() some first");
  std::vector<int64_t> dims = input_shape.dims();
  for (int64_t& d : dims) d = d < 0 ? 1 : d;
  build_input_shape_ = input_shape;
  NoGradGuard no_grad;
  call(zeros(Shape(dims)), /*training=*/false);
  set_built();
}

void Sequential::build_multi(const std::vector<Shape>& input_shapes) {
  if (input_shapes.size() != 1) wrong_input_count(1, input_shapes.size());
  build_input_shape_ = input_shapes[0];
  if (build_input_shape_.rank() > 0) build_input_shape_[0] = -1;
}

Tensor Sequential::call(const Tensor& x, bool training) {
  if (layers_.empty()) throw ValueError("Sequential '" + name() + "': has no layers; add() some first");
  const std::string hint = missing_batch_axis_hint(build_input_shape_, x.shape());
  if (!hint.empty()) {
    throw ShapeError("Sequential '" + name() + "': expected inputs of shape " +
                     build_input_shape_.to_string() + " (-1 = any), got " + x.shape().to_string() +
                     hint);
  }
  Tensor h = x;
  for (const auto& l : layers_) h = (*l)(h, training);
  return h;
}

Json Sequential::get_config() const {
  Json layers = Json::array();
  if (build_input_shape_.rank() > 0) {
    Json shape = Json::array();
    for (int64_t d : build_input_shape_) shape.push_back(d < 0 ? Json() : Json(d));
    layers.push_back(Json::object(
        {{"class_name", "InputLayer"},
         {"config", Json::object({{"batch_input_shape", shape}, {"dtype", "float32"},
                                  {"name", name() + "_input"}})}}));
  }
  for (const auto& l : layers_) {
    layers.push_back(Json::object({{"class_name", l->class_name()}, {"config", l->get_config()}}));
  }
  return Json::object({{"name", name()}, {"layers", layers}});
}

}  // namespace strata
