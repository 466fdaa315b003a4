#include "framework/saving/keras3_layer_config.h"

#include "framework/mixed_precision/dtype_policy.h"

namespace strata::saving {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Keys Keras 3 (3.10) always writes that Strata's get_config leaves out, added as null right
// after `after` (Keras' key order).
struct AddedKey {
  const char* keras_class;
  const char* after;
  const char* key;
};
constexpr AddedKey kAddedKeys[] = {
    {"Dense", "bias_regularizer", "kernel_constraint"},
    {"Dense", "kernel_constraint", "bias_constraint"},
};

// Keys Keras 3's constructor would reject ("Unrecognized keyword arguments").
struct DroppedKey {
  const char* keras_class;
  const char* key;
};
constexpr DroppedKey kDroppedKeys[] = {
    {"IntegerLookup", "oov_method"},  // Strata's (always "floormod", Keras' only behaviour)
};

bool dropped(const std::string& cls, const std::string& key) {
  for (const DroppedKey& d : kDroppedKeys) {
    if (cls == d.keras_class && key == d.key) return true;
  }
  return false;
}

// The Keras 3 module of an object nested in a layer config, from the argument's name.
const char* nested_module(const std::string& key) {
  if (ends_with(key, "_initializer")) return "keras.initializers";
  if (ends_with(key, "_regularizer")) return "keras.regularizers";
  if (ends_with(key, "_constraint")) return "keras.constraints";
  return nullptr;
}

}  // namespace

std::string keras3_class_name(const std::string& strata_class) {
  return strata_class == "SyncBatchNormalization" ? "BatchNormalization" : strata_class;
}

Json keras3_object(const Json& keras2_object, const std::string& module) {
  if (!keras2_object.is_object() || !keras2_object.contains("class_name")) return keras2_object;
  return Json::object({{"module", module},
                       {"class_name", keras2_object.at("class_name")},
                       {"config", keras2_object.get("config", Json::object())},
                       {"registered_name", nullptr}});
}

Json keras3_dtype_policy(const Json& dtype) {
  const std::string name = mixed_precision::DTypePolicy::from_config(dtype).name();
  return Json::object({{"module", "keras"},
                       {"class_name", "DTypePolicy"},
                       {"config", Json::object({{"name", name}})},
                       {"registered_name", nullptr}});
}

Json keras3_layer_entry(const Json& layer_json) {
  const std::string cls = keras3_class_name(layer_json.at("class_name").as_string());
  const Json config = layer_json.get("config", Json::object());
  Json out = Json::object();
  for (const std::string& key : config.keys()) {
    if (dropped(cls, key)) continue;
    const Json value = config.at(key);
    if (key == "dtype" && !value.is_null()) {
      out.set(key, keras3_dtype_policy(value));
    } else if (const char* module = nested_module(key)) {
      out.set(key, keras3_object(value, module));
    } else {
      out.set(key, value);
    }
    // Added keys follow the key they come after (and each other, in the table's order).
    std::string last = key;
    for (const AddedKey& a : kAddedKeys) {
      if (cls == a.keras_class && last == a.after && !config.contains(a.key)) {
        out.set(a.key, nullptr);
        last = a.key;
      }
    }
  }
  return Json::object({{"module", "keras.layers"},
                       {"class_name", cls},
                       {"config", out},
                       {"registered_name", nullptr}});
}

}  // namespace strata::saving
