// Reading the graph of a functional model's config, in both Keras generations' spellings:
//
//   Keras 2 (and Strata's get_config): "inbound_nodes": [[["dense", 0, 0, {}], ...], ...]
//   Keras 3:  "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape":
//             [...], "dtype": ..., "keras_history": ["dense", 0, 0]}}], "kwargs": {}}]
//
// and "input_layers"/"output_layers" as a list of [layer, node, tensor] triples, one bare
// triple (Keras 3, single input), or a dict of them (keyed inputs). Also Keras 3's order of the
// model's operations, which decides the keys of its layers in .keras / .weights.h5 files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/config/json.h"

namespace strata::saving {

// One tensor of the graph: output `tensor` of call `node` of layer `layer`.
struct TensorRef {
  std::string layer;
  int64_t node = 0;
  int64_t tensor = 0;
};

// Every [layer, node, tensor] of `structure` in Keras' flattening order (lists in order, dicts
// by sorted key). ValueError naming `what` when an entry is malformed.
std::vector<TensorRef> flatten_tensor_refs(const Json& structure, const std::string& what);

// One call of a layer, as the config records it.
struct NodeCall {
  std::vector<TensorRef> inputs;  // every input tensor, in order
  bool as_list = false;           // called with one list of tensors (merge layers) or several
  bool tensor_kwargs = false;     // Keras 3 only: tensors passed as keyword arguments
};
// Reads one entry of "inbound_nodes" (either spelling). ValueError naming `layer` when it is
// malformed.
NodeCall read_node_call(const Json& node_data, const std::string& layer);

// Strata's get_config numbers a layer's calls by how often the layer had been called before
// (call_index), which is not their position in "inbound_nodes" when the layer was also called
// outside this model. Returns the Keras 2 spelled `functional_config` with every reference
// renumbered by position: each layer's referenced node indices, sorted, become 0, 1, ...
Json with_positional_node_indices(const Json& functional_config);

// The names of the config's layers (InputLayers included) in the order of Keras 3's
// Functional.operations (keras/src/ops/function.py map_graph: a depth-first walk from the
// outputs, then by decreasing depth, ties in walk order). Node indices must address each
// layer's "inbound_nodes" by position. ValueError for references to unknown layers or nodes
// and for cycles.
std::vector<std::string> keras3_operation_order(const Json& functional_config);

}  // namespace strata::saving
