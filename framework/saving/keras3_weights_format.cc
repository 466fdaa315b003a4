#include "framework/saving/keras3_weights_format.h"

#include <map>
#include <unordered_set>

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/saving/functional_config.h"
#include "framework/saving/keras3_layer_config.h"
#include "framework/saving/keras_attributes.h"
#include "framework/saving/keras_weights_format.h"

namespace strata::saving {
namespace {

constexpr const char* kLegacyLayers = "_layer_checkpoint_dependencies";  // Keras 2.13

struct Assignment {
  VariablePtr variable;
  Tensor value;
};

// A saveable's own variables: for a model those no layer of it holds; for any other layer all
// of its weights (Keras 2 order: trainable first).
std::vector<VariablePtr> own_variables(const Layer& layer) {
  const auto* model = dynamic_cast<const Model*>(&layer);
  if (model == nullptr) return keras2_layer_weights(layer);
  std::unordered_set<const Variable*> in_layers;
  for (const auto& l : model->layers()) {
    for (const VariablePtr& w : l->weights()) in_layers.insert(w.get());
  }
  std::vector<VariablePtr> out;
  for (const VariablePtr& w : keras2_layer_weights(layer)) {
    if (!in_layers.count(w.get())) out.push_back(w);
  }
  return out;
}

std::string join_path(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "/" + b;
}

hdf5::Group make_vars(hdf5::Group& root, const std::string& path, const std::string& name) {
  hdf5::Group vars = root.create_group(join_path(path, "vars"));
  vars.write_string("name", name);  // Keras >= 3.6: H5IOStore.make(path, metadata={"name": ...})
  return vars;
}

void write_saveable(hdf5::Group& root, const std::string& path, const Layer& layer) {
  hdf5::Group vars = make_vars(root, path, layer.name());
  const std::vector<VariablePtr> variables = own_variables(layer);
  for (size_t i = 0; i < variables.size(); ++i) {
    vars.write_dataset(std::to_string(i), variables[i]->read_value());
  }
  if (const auto* model = dynamic_cast<const Model*>(&layer)) {
    for (const Keras3Layer& child : keras3_layers(*model)) {
      const std::string child_path = join_path(path, "layers/" + child.key);
      if (child.layer) {
        write_saveable(root, child_path, *child.layer);
      } else {
        make_vars(root, child_path, child.name);
      }
    }
  }
}

std::string variable_names(const std::vector<VariablePtr>& variables) {
  std::string out;
  for (const VariablePtr& v : variables) out += (out.empty() ? "" : ", ") + v->name();
  return "[" + out + "]";
}

void read_saveable(const hdf5::Group& root, const std::string& path, Layer& layer,
                   bool skip_mismatch, std::vector<Assignment>& out) {
  std::string vars_path = join_path(path, "vars");
  if (!root.has_group(vars_path) && root.has_group(kLegacyLayers)) {
    std::string legacy = vars_path;
    for (size_t at = legacy.find("layers/"); at != std::string::npos;
         at = legacy.find("layers/", at + 1)) {
      if (at == 0 || legacy[at - 1] == '/') legacy.replace(at, 6, kLegacyLayers);
    }
    vars_path = legacy;
  }
  const std::vector<VariablePtr> variables = own_variables(layer);
  const std::string subject = (path.empty() ? "model '" : "layer '") + layer.name() + "'";
  const std::string& file = root.file_path();
  if (!root.has_group(vars_path)) {
    if (!variables.empty()) {
      const std::string msg = subject + " expects " + std::to_string(variables.size()) +
                              " variables " + variable_names(variables) + ", but '" + file +
                              "' has no group '/" + vars_path + "'";
      if (skip_mismatch) {
        warn("Skipping loading weights of " + msg);
      } else {
        throw ValueError("Loading weights: " + msg +
                         "; rebuild the architecture the file was saved from, or pass "
                         "skip_mismatch=true");
      }
    }
  } else {
    const hdf5::Group vars = root.open_group(vars_path);
    const size_t saved = vars.child_names().size();
    if (saved != variables.size()) {
      const std::string msg = subject + " expects " + std::to_string(variables.size()) +
                              " variables " + variable_names(variables) + ", but '" + file +
                              "' holds " + std::to_string(saved) + " at '/" + vars_path + "'";
      if (!skip_mismatch) {
        throw ValueError("Loading weights: " + msg +
                         "; rebuild the architecture the file was saved from, or pass "
                         "skip_mismatch=true");
      }
      warn("Skipping loading weights of " + msg);
    } else {
      for (size_t i = 0; i < variables.size(); ++i) {
        const VariablePtr& v = variables[i];
        const std::string key = std::to_string(i);
        const Shape shape = vars.dataset_shape(key);
        if (shape != v->shape()) {
          const std::string msg = "'" + file + "', " + subject + ", weight '" + v->name() +
                                  "': the model expects shape " + v->shape().to_string() +
                                  ", the file holds shape " + shape.to_string() + " ('/" +
                                  vars_path + "/" + key + "')";
          if (skip_mismatch) {
            warn("Skipping loading weight " + msg);
            continue;
          }
          throw ShapeError("Loading weights: shape mismatch in " + msg +
                           "; build the model with the same shapes, or pass skip_mismatch=true");
        }
        out.push_back({v, vars.read_dataset(key, v->dtype())});
      }
    }
  }
  if (auto* model = dynamic_cast<Model*>(&layer)) {
    for (const Keras3Layer& child : keras3_layers(*model)) {
      if (child.layer) {
        read_saveable(root, join_path(path, "layers/" + child.key), *child.layer, skip_mismatch,
                      out);
      }
    }
  }
}

void append_trainable(const Model& model, std::vector<VariablePtr>& out) {
  for (const VariablePtr& v : own_variables(model)) {
    if (v->trainable()) out.push_back(v);
  }
  for (const Keras3Layer& child : keras3_layers(model)) {
    if (!child.layer) continue;
    if (const auto* nested = dynamic_cast<const Model*>(child.layer.get())) {
      append_trainable(*nested, out);
    } else {
      for (const VariablePtr& v : child.layer->trainable_weights()) out.push_back(v);
    }
  }
}

}  // namespace

std::vector<Keras3Layer> keras3_layers(const Model& model) {
  std::vector<Keras3Layer> out;
  std::map<std::string, int> used;
  auto add = [&](const std::string& keras_class, const std::string& name,
                 std::shared_ptr<Layer> layer) {
    // _get_unique_name: "dense", then "dense_1", "dense_2", ... per class.
    std::string key = to_snake_case(keras_class);
    const auto it = used.find(key);
    if (it == used.end()) {
      used[key] = 0;
    } else {
      key += '_';  // appended piecewise: g++ 12 warns falsely (-Wrestrict) on "_" + to_string
      key += std::to_string(++it->second);
    }
    out.push_back({key, name, std::move(layer)});
  };
  if (model.class_name() != "Functional") {
    for (const auto& layer : model.layers()) {
      add(keras3_class_name(layer->class_name()), layer->name(), layer);
    }
    return out;
  }
  const Json config = with_positional_node_indices(model.get_config());
  std::map<std::string, std::string> class_of;
  const Json layers = config.at("layers");
  for (size_t i = 0; i < layers.size(); ++i) {
    class_of[layers.at(i).at("name").as_string()] = layers.at(i).at("class_name").as_string();
  }
  for (const std::string& name : keras3_operation_order(config)) {
    const std::string& cls = class_of.at(name);
    if (cls == "InputLayer") {
      add(cls, name, nullptr);
    } else {
      add(keras3_class_name(cls), name, model.get_layer(name));
    }
  }
  return out;
}

std::vector<VariablePtr> keras3_trainable_variables(const Model& model) {
  std::vector<VariablePtr> out;
  append_trainable(model, out);
  return out;
}

bool is_keras3_weights_path(const std::string& path) {
  const std::string suffix = ".weights.h5";
  return path.size() >= suffix.size() &&
         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool has_keras3_layout(const hdf5::Group& root) {
  return !has_string_list_attribute(root, "layer_names") &&
         (root.has_group("layers") || root.has_group("vars") || root.has_group(kLegacyLayers));
}

void write_keras3_weights(hdf5::Group& root, const Model& model) { write_saveable(root, "", model); }

void read_keras3_weights(const hdf5::Group& root, Model& model, bool skip_mismatch) {
  std::vector<Assignment> assignments;
  read_saveable(root, "", model, skip_mismatch, assignments);
  for (const Assignment& a : assignments) a.variable->assign(a.value);
}

}  // namespace strata::saving
