// Strata's layer configs (Keras 2.15's spelling, what get_config() returns) in Keras 3's form,
// for the config.json of .keras files. Keras 3 (serialization_lib.serialize_keras_object, as of
// 3.10) wraps every object as
//
//   {"module": "keras.layers", "class_name": "Dense", "config": {...}, "registered_name": null}
//
// and inside the config writes the dtype as a DTypePolicy object and initializers, regularizers
// and constraints with their own "module". Keras 3 constructors reject unknown arguments, so
// the few keys Keras 3 does not take are dropped and the ones it always writes are added (table
// in the .cc). Reading needs no converter: from_config takes both spellings.
#pragma once

#include <string>

#include "framework/config/json.h"

namespace strata::saving {

// Keras 3's class for a Strata layer class: "SyncBatchNormalization" is Keras 3's
// BatchNormalization(synchronized=True); every other class keeps its name.
std::string keras3_class_name(const std::string& strata_class);

// {"module": module, "class_name", "config", "registered_name": null} from Keras 2's
// {"class_name", "config"} (null and non-objects are returned unchanged).
Json keras3_object(const Json& keras2_object, const std::string& module);

// A DTypePolicy name or object (Keras 2 Policy, Keras 3 DTypePolicy) as Keras 3 writes it.
Json keras3_dtype_policy(const Json& dtype);

// {"class_name", "config"} of a layer that is not a model -> Keras 3's entry (without the
// "build_config", "name" and "inbound_nodes" a model adds around it).
Json keras3_layer_entry(const Json& layer_json);

}  // namespace strata::saving
