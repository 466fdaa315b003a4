// Internal: rebuilds a functional model from its config (model_from_config's "Functional" /
// "Model" case), in either Keras generation's spelling (framework/saving/functional_config.h).
// As Keras' functional_from_config does, every layer is created first and each call is replayed
// once the tensors it reads exist, so a layer shared at different depths of the graph
// (A(B(A(x)))) comes back whatever the order of the config's layers.
#pragma once

#include <memory>

#include "framework/config/json.h"
#include "framework/model/model.h"

namespace strata {

// ValueError naming the layer and the tensor for references to unknown layers or calls, a
// graph that cannot be resolved, or calls Strata cannot replay (tensors passed as keyword
// arguments, a second output of a layer).
std::shared_ptr<Model> functional_from_config(const Json& config);

}  // namespace strata
