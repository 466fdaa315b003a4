#include "layers/model_serialization.h"

#include <map>

#include "framework/model/sequential.h"
#include "layers/layer_registry.h"

namespace strata {
namespace {

Shape shape_from_json(const Json& j) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < j.size(); ++i) dims.push_back(j.at(i).is_null() ? -1 : j.at(i).as_int());
  return Shape(dims);
}

std::shared_ptr<Model> sequential_from_config(const Json& config) {
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{},
                                            config.get("name", "").as_string());
  Shape input_shape;
  const Json layers = config.at("layers");
  for (size_t i = 0; i < layers.size(); ++i) {
    const Json l = layers.at(i);
    if (l.at("class_name").as_string() == "InputLayer") {
      const Json c = l.at("config");
      input_shape = shape_from_json(c.contains("batch_input_shape") ? c.at("batch_input_shape")
                                                                     : c.at("batch_shape"));
      continue;
    }
    model->add(layer_from_config(l));
  }
  if (input_shape.rank() > 0) model->build(input_shape);
  return model;
}

std::shared_ptr<Model> functional_from_config(const Json& config) {
  // (layer name, node index, tensor index) -> KerasTensor, filled as layers are called in the
  // order the config lists them (Keras writes them in topological order).
  std::map<std::tuple<std::string, int64_t, int64_t>, KerasTensor> tensors;
  const Json layers = config.at("layers");
  for (size_t i = 0; i < layers.size(); ++i) {
    const Json l = layers.at(i);
    const std::string cls = l.at("class_name").as_string();
    const std::string name = l.get("name", l.at("config").get("name", "")).as_string();
    if (cls == "InputLayer") {
      const Json c = l.at("config");
      Shape batch_shape = shape_from_json(c.contains("batch_input_shape") ? c.at("batch_input_shape")
                                                                           : c.at("batch_shape"));
      std::vector<int64_t> dims(batch_shape.dims().begin() + 1, batch_shape.dims().end());
      tensors[{name, 0, 0}] =
          Input(Shape(dims), dtype_from_name(c.get("dtype", "float32").as_string()), name);
      continue;
    }
    std::shared_ptr<Layer> layer = layer_from_config(l);
    const Json inbound = l.at("inbound_nodes");
    for (size_t node = 0; node < inbound.size(); ++node) {
      const Json call = inbound.at(node);
      std::vector<KerasTensor> args;
      for (size_t a = 0; a < call.size(); ++a) {
        const Json ref = call.at(a);
        auto it = tensors.find({ref.at(size_t(0)).as_string(), ref.at(1).as_int(), ref.at(2).as_int()});
        if (it == tensors.end()) {
          throw ValueError("model_from_json: layer '" + name + "' reads '" +
                           ref.at(size_t(0)).as_string() + "', which is not defined before it");
        }
        args.push_back(it->second);
      }
      tensors[{name, int64_t(node), 0}] = args.size() == 1 ? (*layer)(args[0]) : (*layer)(args);
    }
  }
  auto refs = [&](const Json& list) {
    std::vector<KerasTensor> out;
    for (size_t i = 0; i < list.size(); ++i) {
      const Json r = list.at(i);
      out.push_back(tensors.at({r.at(size_t(0)).as_string(), r.at(1).as_int(), r.at(2).as_int()}));
    }
    return out;
  };
  return std::make_shared<Model>(refs(config.at("input_layers")), refs(config.at("output_layers")),
                                 config.get("name", "").as_string());
}

}  // namespace

std::shared_ptr<Model> model_from_config(const Json& model_json) {
  const std::string cls = model_json.at("class_name").as_string();
  const Json config = model_json.at("config");
  if (cls == "Sequential") return sequential_from_config(config);
  if (cls == "Functional" || cls == "Model") {
    if (!config.contains("layers")) {
      throw ValueError("model_from_json: a subclassed model's config holds no architecture; "
                       "construct the class in code and load its weights instead");
    }
    return functional_from_config(config);
  }
  throw ValueError("model_from_json: unknown model class '" + cls +
                   "'; expected Sequential or Functional");
}

std::shared_ptr<Model> model_from_json(const std::string& json) {
  return model_from_config(Json::parse(json));
}

}  // namespace strata
