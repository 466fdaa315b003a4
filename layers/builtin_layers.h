// Internal: the factories of every built-in layer, keyed by Keras class name.
#pragma once

#include <map>
#include <string>

#include "layers/layer_registry.h"

namespace strata {
std::map<std::string, LayerFactory> builtin_layer_factories();
}  // namespace strata
