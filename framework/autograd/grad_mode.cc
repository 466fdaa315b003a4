#include "framework/autograd/grad_mode.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/variables/variable.h"

namespace strata {
namespace {

struct ThreadGradState {
  int active_tapes = 0;
  int watching_tapes = 0;  // tapes with watch_accessed_variables
  bool no_grad = false;
};
thread_local ThreadGradState t_state;

// What gradient_with_slices collects: the rows gathered from its source variables.
struct SparseCollector {
  std::unordered_set<const autograd::Node*> sources;  // the source variables' leaves
  std::unordered_map<const autograd::Node*, std::vector<IndexedSlices>> parts;
};
thread_local SparseCollector* t_sparse = nullptr;

// Installs a collector for one backward pass (nested tapes each see their own).
class CollectorScope {
 public:
  explicit CollectorScope(SparseCollector* c) : previous_(t_sparse) { t_sparse = c; }
  ~CollectorScope() { t_sparse = previous_; }
  CollectorScope(const CollectorScope&) = delete;
  CollectorScope& operator=(const CollectorScope&) = delete;

 private:
  SparseCollector* previous_;
};

// The tensors carrying the variables' leaf nodes (Variable::gradient_handle), for `method`.
std::vector<Tensor> gradient_handles(const std::vector<std::shared_ptr<Variable>>& sources,
                                     const char* method) {
  std::vector<Tensor> handles;
  handles.reserve(sources.size());
  for (const auto& v : sources) {
    if (!v) {
      throw ValueError(std::string("GradientTape.") + method + ": a source variable is null");
    }
    handles.push_back(v->gradient_handle());
  }
  return handles;
}

// Reverse topological order (outputs first) of the nodes reachable from `root`.
std::vector<autograd::Node*> topological_order(autograd::Node* root) {
  std::vector<autograd::Node*> order;
  std::unordered_set<autograd::Node*> visited;
  // Iterative post-order DFS: deep graphs must not overflow the stack.
  std::vector<std::pair<autograd::Node*, size_t>> stack{{root, 0}};
  visited.insert(root);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs().size()) {
      autograd::Node* child = node->inputs()[next++].get();
      if (child != nullptr && visited.insert(child).second) stack.push_back({child, 0});
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace

namespace autograd {
bool is_recording() { return t_state.active_tapes > 0 && !t_state.no_grad; }

bool emit_sparse_gradient(const Node* params, const Tensor& ids, const Tensor& rows,
                          const Shape& params_shape) {
  if (t_sparse == nullptr || !t_sparse->sources.count(params)) return false;
  const int64_t n = ids.numel();
  t_sparse->parts[params].push_back(
      IndexedSlices{ids.reshape(Shape{n}).cast(DType::kInt64),
                    rows.reshape(IndexedSlices::rows_shape(params_shape, n)), params_shape});
  return true;
}
bool should_watch_variables() { return t_state.watching_tapes > 0 && !t_state.no_grad; }
}  // namespace autograd

GradientTape::GradientTape(bool persistent, bool watch_accessed_variables)
    : persistent_(persistent), watch_accessed_variables_(watch_accessed_variables) {
  ++t_state.active_tapes;
  if (watch_accessed_variables_) ++t_state.watching_tapes;
}

GradientTape::~GradientTape() {
  --t_state.active_tapes;
  if (watch_accessed_variables_) --t_state.watching_tapes;
}

void GradientTape::watch(const Tensor& t) {
  if (!is_floating(t.dtype())) {
    throw DTypeError(std::string("GradientTape.watch: only floating tensors have gradients; got ") +
                     dtype_name(t.dtype()));
  }
  if (t.grad_node() == nullptr) t.set_grad_node(std::make_shared<autograd::Node>("watched"));
}

void GradientTape::watch(const Variable& v) { v.watch(); }

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Tensor>& sources,
                                           const Tensor& output_gradient,
                                           UnconnectedGradients unconnected) {
  std::vector<Gradient> g = run(target, sources, output_gradient, unconnected, false);
  std::vector<Tensor> out;
  out.reserve(g.size());
  for (Gradient& x : g) out.push_back(x.dense());  // never sparse without with_slices
  return out;
}

std::vector<Gradient> GradientTape::gradient_with_slices(
    const Tensor& target, const std::vector<std::shared_ptr<Variable>>& sources,
    UnconnectedGradients unconnected) {
  return run(target, gradient_handles(sources, "gradient_with_slices"), Tensor(), unconnected,
             true);
}

std::vector<Gradient> GradientTape::run(const Tensor& target, const std::vector<Tensor>& sources,
                                        const Tensor& output_gradient,
                                        UnconnectedGradients unconnected, bool with_slices) {
  if (used_ && !persistent_) {
    throw StateError("GradientTape.gradient: a non-persistent tape can compute gradients only "
                     "once; create it with GradientTape(/*persistent=*/true) to call it again");
  }
  used_ = true;
  NoGradGuard no_grad;  // the backward pass itself is not recorded

  std::vector<Gradient> result(sources.size());
  std::vector<bool> reported(sources.size(), false);
  autograd::Node* root = target.grad_node().get();
  std::unordered_map<autograd::Node*, Tensor> grads;
  // With slices: the gathers from source variables hand their rows here (emit_sparse_gradient).
  SparseCollector sparse;
  CollectorScope collecting(with_slices ? &sparse : nullptr);
  if (with_slices) {
    for (const Tensor& s : sources) {
      if (s.defined() && s.grad_node() && s.grad_node()->is_leaf()) {
        sparse.sources.insert(s.grad_node().get());
      }
    }
  }
  // A source's gradient from its dense part (grads) and its rows (sparse.parts).
  const auto gradient_of = [&](autograd::Node* node) -> Gradient {
    auto g = grads.find(node);
    auto p = sparse.parts.find(node);
    if (p == sparse.parts.end()) return g != grads.end() ? Gradient(g->second) : Gradient();
    const IndexedSlices rows = IndexedSlices::concat(p->second);
    if (g == grads.end()) return Gradient(rows);
    Tensor dense = g->second.clone();  // read whole as well: the rows join the dense gradient
    backend_for(dense).scatter_add(rows.values, rows.indices, 0, dense);
    return Gradient(dense);
  };
  if (root != nullptr) {
    // Nodes from which some source is reachable: only those need gradients.
    std::unordered_set<autograd::Node*> wanted;
    for (const Tensor& s : sources) {
      if (s.defined() && s.grad_node()) wanted.insert(s.grad_node().get());
    }
    const std::vector<autograd::Node*> order = topological_order(root);
    std::unordered_set<autograd::Node*> relevant(wanted);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {  // inputs before outputs
      for (const auto& in : (*it)->inputs()) {
        if (in && relevant.count(in.get())) { relevant.insert(*it); break; }
      }
    }

    Tensor seed = output_gradient;
    if (!seed.defined()) {
      seed = ones_like(target);
    } else if (seed.shape() != target.shape()) {
      throw ShapeError("GradientTape.gradient: output_gradient has shape " +
                       seed.shape().to_string() + " but the target has shape " +
                       target.shape().to_string());
    }
    grads[root] = seed;
    // For the ready callback: how many relevant consumers each source has not heard from yet.
    std::unordered_map<autograd::Node*, int> pending;
    std::unordered_map<autograd::Node*, std::vector<size_t>> source_indices;
    if (on_ready_) {
      for (size_t i = 0; i < sources.size(); ++i) {
        if (sources[i].defined() && sources[i].grad_node()) {
          source_indices[sources[i].grad_node().get()].push_back(i);
        }
      }
      for (autograd::Node* node : order) {
        if (!relevant.count(node) || node->is_leaf()) continue;
        for (const auto& in : node->inputs()) {
          if (in && wanted.count(in.get())) ++pending[in.get()];
        }
      }
    }
    const auto consumed = [&](autograd::Node* node) {
      if (!on_ready_) return;
      for (const auto& in : node->inputs()) {
        if (!in || !wanted.count(in.get())) continue;
        if (--pending[in.get()] != 0) continue;
        const Gradient g = gradient_of(in.get());
        for (size_t i : source_indices[in.get()]) {
          result[i] = g;
          if (!result[i].defined() && unconnected == UnconnectedGradients::kZero) {
            result[i] = Gradient(zeros_like(sources[i]));
          }
          reported[i] = true;
          if (!result[i].is_sparse()) on_ready_(i, result[i].dense());
        }
      }
    };
    for (autograd::Node* node : order) {
      if (!relevant.count(node)) continue;
      auto found = grads.find(node);
      if (node->is_leaf()) continue;
      if (found == grads.end()) {
        consumed(node);
        continue;
      }
      if (node->released()) {
        throw StateError("GradientTape.gradient: the graph behind this target was already freed "
                         "by an earlier gradient() call; use a persistent tape");
      }
      Tensor g = found->second;
      if (!wanted.count(node)) grads.erase(found);  // intermediate gradients die early
      autograd::NeedsGrad needs(node->inputs().size());
      for (size_t i = 0; i < needs.size(); ++i) {
        needs[i] = node->inputs()[i] && relevant.count(node->inputs()[i].get());
      }
      std::vector<Tensor> in_grads = node->backward(g, needs, !persistent_);
      for (size_t i = 0; i < needs.size(); ++i) {
        if (!needs[i] || !in_grads[i].defined()) continue;
        Tensor& acc = grads[node->inputs()[i].get()];
        acc = acc.defined() ? add(acc, in_grads[i]) : in_grads[i];
      }
      consumed(node);
    }
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    const Tensor& s = sources[i];
    if (reported[i]) continue;
    if (s.defined() && s.grad_node()) result[i] = gradient_of(s.grad_node().get());
    if (!result[i].defined() && unconnected == UnconnectedGradients::kZero && s.defined()) {
      result[i] = Gradient(zeros_like(s));
    }
    if (on_ready_ && !result[i].is_sparse()) on_ready_(i, result[i].dense());
  }
  return result;
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target,
                                           const std::vector<std::shared_ptr<Variable>>& sources,
                                           const Tensor& output_gradient,
                                           UnconnectedGradients unconnected) {
  return gradient(target, gradient_handles(sources, "gradient"), output_gradient, unconnected);
}

Tensor GradientTape::gradient(const Tensor& target, const Tensor& source) {
  return gradient(target, std::vector<Tensor>{source})[0];
}

NoGradGuard::NoGradGuard() : previous_(t_state.no_grad) { t_state.no_grad = true; }
NoGradGuard::~NoGradGuard() { t_state.no_grad = previous_; }

}  // namespace strata
