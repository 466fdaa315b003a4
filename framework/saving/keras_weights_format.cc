#include "framework/saving/keras_weights_format.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/saving/keras_attributes.h"

namespace strata::saving {
namespace {

constexpr const char* kTopLevelGroup = "top_level_model_weights";

struct Assignment {
  VariablePtr variable;
  Tensor value;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return "[" + out + "]";
}

std::vector<std::string> names_of(const std::vector<VariablePtr>& weights) {
  std::vector<std::string> out;
  for (const VariablePtr& w : weights) out.push_back(keras2_weight_name(*w));
  return out;
}

// Weights the model holds itself rather than through one of its layers (Keras 2's
// top_level_model_weights), trainable first.
std::vector<VariablePtr> top_level_weights(const Model& model) {
  std::unordered_set<const Variable*> in_layers;
  for (const auto& layer : model.layers()) {
    for (const VariablePtr& w : layer->weights()) in_layers.insert(w.get());
  }
  std::vector<VariablePtr> out;
  for (const VariablePtr& w : model.trainable_weights()) {
    if (!in_layers.count(w.get())) out.push_back(w);
  }
  for (const VariablePtr& w : model.non_trainable_weights()) {
    if (!in_layers.count(w.get())) out.push_back(w);
  }
  return out;
}

void write_weight_group(hdf5::Group& group, const std::vector<VariablePtr>& weights) {
  write_string_list_attribute(group, "weight_names", names_of(weights));
  for (const VariablePtr& w : weights) group.write_dataset(keras2_weight_name(*w), w->read_value());
}

// Pairs `weights` (of `subject`: "layer 'dense'") with the datasets `weight_names` of the
// file's group `file_layer`, checking counts and shapes.
void match_weights(const hdf5::Group& file_layer, const std::vector<std::string>& weight_names,
                   const std::string& subject, const std::vector<VariablePtr>& weights,
                   const WeightLoadOptions& options, std::vector<Assignment>& out) {
  const std::string& file = file_layer.file_path();
  if (weight_names.size() != weights.size()) {
    const std::string msg = subject + " has " + std::to_string(weights.size()) +
                            " weight(s) " + joined(names_of(weights)) + " in the model, but '" +
                            file + "' holds " + std::to_string(weight_names.size()) + " " +
                            joined(weight_names) + " for it (group '" + file_layer.path() + "')";
    if (options.skip_mismatch) {
      warn("Skipping loading weights of " + msg);
      return;
    }
    throw ValueError("Loading weights: weight count mismatch: " + msg +
                     "; rebuild the architecture the file was saved from, or pass "
                     "skip_mismatch=true to skip this layer");
  }
  for (size_t i = 0; i < weights.size(); ++i) {
    const VariablePtr& w = weights[i];
    const Shape saved = file_layer.dataset_shape(weight_names[i]);
    if (saved != w->shape()) {
      const std::string msg = "'" + file + "', " + subject + ", weight '" + w->name() +
                              "': the model expects shape " + w->shape().to_string() +
                              ", the file holds shape " + saved.to_string() + " ('" +
                              weight_names[i] + "')";
      if (options.skip_mismatch) {
        warn("Skipping loading weight " + msg);
        continue;
      }
      throw ShapeError("Loading weights: shape mismatch in " + msg +
                       "; build the model with the same shapes, or pass skip_mismatch=true to "
                       "skip it");
    }
    out.push_back({w, file_layer.read_dataset(weight_names[i], w->dtype())});
  }
}

std::vector<std::string> weight_names_of(const hdf5::Group& group) {
  return read_string_list_attribute(group, "weight_names");
}

void match_top_level(const hdf5::Group& group, const Model& model, const WeightLoadOptions& options,
                     std::vector<Assignment>& out) {
  if (!group.has_group(kTopLevelGroup)) return;
  const hdf5::Group top = group.open_group(kTopLevelGroup);
  const std::vector<std::string> names = weight_names_of(top);
  const std::vector<VariablePtr> weights = top_level_weights(model);
  if (names.empty() && weights.empty()) return;
  match_weights(top, names, "model '" + model.name() + "' (its own weights)", weights, options,
                out);
}

void load_by_order(const hdf5::Group& group, Model& model, const std::vector<std::string>& file_layers,
                   const WeightLoadOptions& options, std::vector<Assignment>& out) {
  // Keras matches the layers that have weights, in order, with the file's layers that have some.
  std::vector<std::shared_ptr<Layer>> layers;
  std::vector<std::string> layer_names;
  for (const auto& layer : model.layers()) {
    if (!keras2_layer_weights(*layer).empty()) {
      layers.push_back(layer);
      layer_names.push_back(layer->name());
    }
  }
  std::vector<std::string> saved;
  std::vector<std::vector<std::string>> saved_weights;
  for (const std::string& name : file_layers) {
    std::vector<std::string> weights = weight_names_of(group.open_group(name));
    if (weights.empty()) continue;
    saved.push_back(name);
    saved_weights.push_back(std::move(weights));
  }
  if (layers.empty() && !saved.empty() && !model.built()) {
    throw ValueError("Loading weights from '" + group.file_path() + "': model '" + model.name() +
                     "' has not been built, so it has no weights to load into yet; call it on a "
                     "batch or build() it first");
  }
  if (saved.size() != layers.size()) {
    throw ValueError("Loading weights from '" + group.file_path() +
                     "': layer count mismatch: model '" + model.name() + "' has " +
                     std::to_string(layers.size()) + " layer(s) with weights " +
                     joined(layer_names) + ", the file has " + std::to_string(saved.size()) +
                     " " + joined(saved) +
                     "; load with by_name=true to match layers by name, or rebuild the "
                     "architecture the file was saved from");
  }
  for (size_t k = 0; k < layers.size(); ++k) {
    match_weights(group.open_group(saved[k]), saved_weights[k], "layer '" + layers[k]->name() + "'",
                  keras2_layer_weights(*layers[k]), options, out);
  }
}

void load_by_name(const hdf5::Group& group, Model& model, const std::vector<std::string>& file_layers,
                  const WeightLoadOptions& options, std::vector<Assignment>& out) {
  std::multimap<std::string, std::shared_ptr<Layer>> index;
  std::vector<std::string> model_layers;
  for (const auto& layer : model.layers()) {
    index.emplace(layer->name(), layer);
    model_layers.push_back(layer->name());
  }
  const bool any_match = std::any_of(file_layers.begin(), file_layers.end(),
                                     [&](const std::string& n) { return index.count(n) > 0; });
  if (!any_match && !file_layers.empty()) {
    // Keras loads nothing silently here; a mistyped name or a renamed model deserves a word.
    warn("load_weights('" + group.file_path() + "', by_name=true): no layer of model '" +
         model.name() + "' has a name found in the file, so no weights were loaded. The file's "
         "layers: " + joined(file_layers) + "; the model's: " + joined(model_layers) +
         ". Name the layers as in the file, or load by order (by_name=false)");
  }
  for (const std::string& name : file_layers) {
    const auto [first, last] = index.equal_range(name);
    if (first == last) continue;  // layers the model lacks are ignored, as in Keras
    const hdf5::Group file_layer = group.open_group(name);
    const std::vector<std::string> weights = weight_names_of(file_layer);
    for (auto it = first; it != last; ++it) {
      match_weights(file_layer, weights, "layer '" + name + "'", keras2_layer_weights(*it->second),
                    options, out);
    }
  }
}

}  // namespace

std::vector<VariablePtr> keras2_layer_weights(const Layer& layer) {
  std::vector<VariablePtr> out = layer.trainable_weights();
  for (const VariablePtr& w : layer.non_trainable_weights()) out.push_back(w);
  return out;
}

void write_keras2_weights(hdf5::Group& group, const Model& model) {
  const std::vector<std::shared_ptr<Layer>> layers = model.layers();
  std::vector<std::string> names;
  for (const auto& layer : layers) {
    if (std::find(names.begin(), names.end(), layer->name()) != names.end()) {
      throw ValueError("Saving weights of model '" + model.name() + "': two layers are named '" +
                       layer->name() + "'; the file keys layers by name, so give them unique names");
    }
    names.push_back(layer->name());
  }
  write_string_list_attribute(group, "layer_names", names);
  group.write_string("backend", kKerasBackend);
  group.write_string("keras_version", kKerasVersion);
  // Keras creates the groups sorted by name (so no name is created before a prefix of it).
  std::vector<std::shared_ptr<Layer>> sorted = layers;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a->name() < b->name(); });
  for (const auto& layer : sorted) {
    hdf5::Group g = group.create_group(layer->name());
    write_weight_group(g, keras2_layer_weights(*layer));
  }
  hdf5::Group top = group.create_group(kTopLevelGroup);
  write_weight_group(top, top_level_weights(model));
}

void read_keras2_weights(const hdf5::Group& group, Model& model, const WeightLoadOptions& options) {
  const std::vector<std::string> file_layers = read_string_list_attribute(group, "layer_names");
  std::vector<Assignment> assignments;
  if (options.by_name) {
    load_by_name(group, model, file_layers, options, assignments);
  } else {
    load_by_order(group, model, file_layers, options, assignments);
  }
  match_top_level(group, model, options, assignments);
  for (const Assignment& a : assignments) a.variable->assign(a.value);
}

}  // namespace strata::saving
