// Neural-network ops: matmul, convolution, pooling, batch norm, activations, softmax, dropout.
// Data is channels-last (NHWC); convolution filters are HWIO (kh, kw, in/groups, out), as Keras.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "framework/backend/kernel_params.h"
#include "framework/core/tensor.h"

namespace strata {

// a: [..., M, K], b: [..., K, N] or [K, N]; transposes apply to the last two axes.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false,
              bool transpose_b = false);

// padding: "valid" or "same" (TensorFlow's rule: extra padding goes after).
Tensor conv2d(const Tensor& x, const Tensor& filters, std::pair<int, int> strides = {1, 1},
              const std::string& padding = "valid", std::pair<int, int> dilation = {1, 1},
              int groups = 1);
Tensor max_pool2d(const Tensor& x, std::pair<int, int> pool_size, std::pair<int, int> strides,
                  const std::string& padding = "valid");
Tensor avg_pool2d(const Tensor& x, std::pair<int, int> pool_size, std::pair<int, int> strides,
                  const std::string& padding = "valid");
// Output size of a conv/pool along one spatial axis, and its padding, under TF's rules.
struct ConvGeometry {
  int64_t out = 0;
  int pad_before = 0, pad_after = 0;
};
ConvGeometry conv_geometry(int64_t in, int window, int stride, int dilation,
                           const std::string& padding, const char* op);

// Batch normalisation over all axes but the last. Training form returns y and the batch mean
// and (biased) variance; gradients flow to x, gamma and beta.
struct BatchNormResult {
  Tensor y, mean, variance;
};
// With fuse_relu, y = relu(batch_norm(x)) computed in one kernel (forward and backward).
BatchNormResult batch_norm_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    float epsilon = 1e-3f, bool fuse_relu = false);
Tensor batch_norm_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                            const Tensor& moving_mean, const Tensor& moving_variance,
                            float epsilon = 1e-3f);

// Activations (oneDNN eltwise on the CPU). `alpha` is the parameter of kLeakyReLU (negative
// slope) and kELU; unset, it is Keras 3's default (leaky_relu 0.2, elu 1.0).
Tensor activation(const Tensor& x, Activation act, std::optional<float> alpha = std::nullopt);
// Keras 3's default parameter of an activation (0 for those that take none).
float default_activation_alpha(Activation act);
Tensor relu(const Tensor& x);
// relu(a + b) in one pass over memory, with a one-pass backward (residual blocks' Add -> ReLU).
// a and b broadcast as in add().
Tensor add_relu(const Tensor& a, const Tensor& b);
Tensor leaky_relu(const Tensor& x, float alpha = 0.2f);
Tensor elu(const Tensor& x, float alpha = 1.0f);
Tensor selu(const Tensor& x);
Tensor gelu(const Tensor& x, bool approximate = false);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor swish(const Tensor& x);
Tensor softplus(const Tensor& x);
Tensor relu6(const Tensor& x);
Tensor hard_sigmoid(const Tensor& x);
Tensor softsign(const Tensor& x);
Tensor hard_silu(const Tensor& x);  // Keras' hard_silu / hard_swish
Tensor hard_swish(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor log_sigmoid(const Tensor& x);
Tensor hard_tanh(const Tensor& x);
// Parses Keras 3's names of the activations above: "linear", "relu", "leaky_relu", "elu", "selu",
// "gelu", "sigmoid", "tanh", "swish"/"silu", "softplus", "relu6", "hard_sigmoid", "softsign",
// "hard_silu"/"hard_swish", "mish", "log_sigmoid", "exponential", "hard_tanh"; ValueError
// otherwise. The parameters by name are Keras' defaults (default_activation_alpha).
Activation activation_from_name(const std::string& name);
// The names activation_from_name accepts, comma-separated (for error messages).
std::string activation_names();

Tensor softmax(const Tensor& x, int axis = -1);
Tensor log_softmax(const Tensor& x, int axis = -1);

// Inverted dropout: zeroes elements with probability `rate`, scales the rest by 1/(1-rate).
Tensor dropout(const Tensor& x, float rate, int64_t seed = -1);

// Embedding lookup: rows of `params` [vocab, dim] at integer `ids`; the gradient is a
// scatter-add into a dense [vocab, dim] tensor.
Tensor embedding_lookup(const Tensor& params, const Tensor& ids);
// x + bias along the last axis.
Tensor bias_add(const Tensor& x, const Tensor& bias);

}  // namespace strata
