#include "framework/autograd/node.h"

#include "framework/autograd/grad_mode.h"

namespace strata::autograd {

std::vector<Tensor> Node::backward(const Tensor& grad_output, const NeedsGrad& needs,
                                   bool release) {
  STRATA_CHECK(backward_ != nullptr);
  STRATA_CHECK(needs.size() == inputs_.size());
  std::vector<Tensor> grads = backward_(grad_output, needs);
  STRATA_CHECK(grads.size() == inputs_.size());
  if (release) {
    backward_ = nullptr;  // frees the tensors the op saved
    released_ = true;
  }
  return grads;
}

bool any_requires_grad(const std::vector<Tensor>& inputs) {
  if (!is_recording()) return false;
  for (const Tensor& t : inputs) {
    if (t.defined() && t.grad_node() != nullptr) return true;
  }
  return false;
}

bool record(const Tensor& out, const char* name, const std::vector<Tensor>& inputs,
            BackwardFn backward) {
  if (!any_requires_grad(inputs)) return false;
  std::vector<std::shared_ptr<Node>> input_nodes;
  input_nodes.reserve(inputs.size());
  for (const Tensor& t : inputs) input_nodes.push_back(t.defined() ? t.grad_node() : nullptr);
  out.set_grad_node(std::make_shared<Node>(name, std::move(input_nodes), std::move(backward)));
  return true;
}

}  // namespace strata::autograd
