// Internal: the factories of the preprocessing layers, keyed by Keras class name (merged into
// the layer registry with the built-in layers).
#pragma once

#include <map>
#include <string>

#include "layers/layer_registry.h"

namespace strata {
std::map<std::string, LayerFactory> preprocessing_layer_factories();
}  // namespace strata
