#include "layers/layer_registry.h"

#include <map>
#include <mutex>

#include "framework/mixed_precision/dtype_policy.h"
#include "layers/builtin_layers.h"

namespace strata {
namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
// Built-in layers are listed explicitly (builtin_layers.cc) rather than self-registering from
// static initialisers, which a static library's linker would drop.
std::map<std::string, LayerFactory>& registry() {
  static std::map<std::string, LayerFactory> r = builtin_layer_factories();
  return r;
}
}  // namespace

void register_layer(const std::string& class_name, LayerFactory factory) {
  if (class_name.empty() || !factory) throw ValueError("register_layer: empty class name or factory");
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[class_name] = std::move(factory);
}

std::vector<std::string> registered_layers() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::string> names;
  for (const auto& [k, v] : registry()) names.push_back(k);
  return names;
}

std::shared_ptr<Layer> layer_from_config(const Json& layer_json) {
  const std::string cls = layer_json.at("class_name").as_string();
  LayerFactory factory;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(cls);
    if (it != registry().end()) factory = it->second;
  }
  const Json config = layer_json.get("config", Json::object());
  if (!factory) {
    std::string names;
    for (const std::string& n : registered_layers()) names += (names.empty() ? "" : ", ") + n;
    const Json name = config.is_object() ? config.get("name", Json()) : Json();
    const std::string layer = name.is_string() ? " (layer '" + name.as_string() + "')" : "";
    throw ValueError("unknown layer class '" + cls + "'" + layer + ": Strata has no layer of "
                     "that class; register a C++ implementation under that class name with "
                     "register_layer(\"" + cls + "\", factory) before loading. Known classes: " +
                     names);
  }
  std::shared_ptr<Layer> layer = factory(config);
  // The policy the layer was saved with (Keras' dtype argument), for every class at once. A
  // config without one (older files) leaves the global policy the constructor took; "string" is
  // what Keras writes for string-valued preprocessing layers, which have no tensor dtype here.
  const Json dtype = config.get("dtype", Json());
  if (!dtype.is_null() && !(dtype.is_string() && dtype.as_string() == "string")) {
    layer->set_dtype_policy(mixed_precision::DTypePolicy::from_config(dtype));
  }
  return layer;
}

Json layer_to_json(const Layer& layer) {
  return Json::object({{"class_name", layer.class_name()}, {"config", layer.get_config()}});
}

}  // namespace strata
