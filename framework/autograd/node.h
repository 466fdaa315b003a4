// The autograd graph. Each differentiable op that sees an input under recording creates a Node
// holding the inputs' nodes and a backward function that captures what it needs; the output
// tensor points at the node. Leaf nodes stand for watched tensors and trainable variables.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace strata::autograd {

// Which of a node's inputs want a gradient; backward functions skip the others.
using NeedsGrad = std::vector<bool>;
// Given d(target)/d(output), returns d(target)/d(input_i) for each input (an undefined Tensor
// where none is needed or the input is not differentiable).
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output, const NeedsGrad&)>;

class Node {
 public:
  Node(std::string name, std::vector<std::shared_ptr<Node>> inputs, BackwardFn backward)
      : name_(std::move(name)), inputs_(std::move(inputs)), backward_(std::move(backward)) {}
  // A leaf: no inputs, no backward; gradients accumulate here.
  explicit Node(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  const std::vector<std::shared_ptr<Node>>& inputs() const { return inputs_; }
  bool is_leaf() const { return inputs_.empty() && !backward_; }
  bool released() const { return released_; }

  // Runs the backward function for the inputs flagged in `needs`. With `release`, drops it
  // afterwards so the tensors it captured are freed as soon as the backward pass has used them.
  std::vector<Tensor> backward(const Tensor& grad_output, const NeedsGrad& needs, bool release);

 private:
  std::string name_;
  std::vector<std::shared_ptr<Node>> inputs_;
  BackwardFn backward_;
  bool released_ = false;
};

// True while some GradientTape is active on this thread and no NoGradGuard is.
bool is_recording();

// Records `out` as produced by an op named `name` from `inputs`, when recording and at least
// one input is part of a recorded computation. Returns whether it recorded.
bool record(const Tensor& out, const char* name, const std::vector<Tensor>& inputs,
            BackwardFn backward);

// True when recording and any of `inputs` carries a grad node: lets ops skip saving tensors.
bool any_requires_grad(const std::vector<Tensor>& inputs);

// For a gather's backward (embedding_lookup): while GradientTape::gradient_with_slices runs and
// `params` is one of its sources, takes the gradient of the gathered rows (`rows`, one per id
// in `ids`) as IndexedSlices of `params` and returns true; the backward then gives no dense
// gradient for params. Returns false otherwise (the caller scatters into a dense gradient).
bool emit_sparse_gradient(const Node* params, const Tensor& ids, const Tensor& rows,
                          const Shape& params_shape);

}  // namespace strata::autograd
