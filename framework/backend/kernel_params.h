// Plain parameter structs shared by the op front-ends and every backend's kernels.
#pragma once

#include <cstdint>
#include <vector>

namespace strata {

enum class UnaryOp : uint8_t {
  kNeg, kAbs, kSign, kExp, kLog, kLog1p, kExpm1, kSqrt, kRsqrt, kSquare, kReciprocal,
  kSin, kCos, kTanh, kSigmoid, kFloor, kCeil, kRound, kLogicalNot, kIsNan, kIsFinite,
};

enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kPow, kMaximum, kMinimum, kFloorMod,
  kAddReLU,  // max(a + b, 0), floating only: the fused residual Add -> ReLU
  // Comparisons and logic produce bool.
  kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kLogicalAnd, kLogicalOr,
};

enum class ReduceOp : uint8_t { kSum, kMean, kMax, kMin, kProd, kAny, kAll };
enum class ArgReduceOp : uint8_t { kArgMax, kArgMin };

// Activations that oneDNN / cuDNN implement natively, forward and backward.
// kLeakyReLU and kELU take a parameter (negative slope, alpha); the others ignore it.
enum class Activation : uint8_t {
  kLinear, kReLU, kLeakyReLU, kELU, kSELU, kGELU, kGELUTanh, kSigmoid, kTanh, kSwish,
  kSoftplus, kReLU6, kHardSigmoid,
  kSoftsign,    // x / (1 + |x|)
  kHardSwish,   // Keras' hard_silu: x * relu6(x + 3) / 6
  kMish,        // x * tanh(softplus(x))
  kLogSigmoid,  // log(sigmoid(x)) = -softplus(-x)
  kExponential, // exp(x)
  kHardTanh,    // clip(x, -1, 1)
};

enum class RandomDistribution : uint8_t { kUniform, kNormal, kTruncatedNormal };

struct Conv2DParams {
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int groups = 1;
};

enum class PoolKind : uint8_t { kMax, kAverage };

struct Pool2DParams {
  int window_h = 2, window_w = 2;
  int stride_h = 2, stride_w = 2;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  // Average pooling divides by the number of non-padding elements (Keras/TensorFlow "SAME").
};

enum class OptimizerKind : uint8_t { kSGD, kAdam, kAdamW, kRMSprop, kAdagrad };

// Everything one fused update of one variable needs. Hyper-parameters are already resolved for
// this step (learning rate from the schedule, bias corrections from the step count).
struct OptimizerUpdate {
  OptimizerKind kind = OptimizerKind::kSGD;
  float learning_rate = 0.01f;
  float momentum = 0.0f;    // SGD
  bool nesterov = false;    // SGD
  float beta_1 = 0.9f;      // Adam/AdamW
  float beta_2 = 0.999f;    // Adam/AdamW
  bool amsgrad = false;     // Adam/AdamW
  float rho = 0.9f;         // RMSprop
  bool centered = false;    // RMSprop
  float epsilon = 1e-7f;
  float weight_decay = 0.0f;  // decoupled: var -= lr * wd * var
  int64_t step = 1;           // 1-based count of updates, for Adam's bias correction
  float grad_scale = 1.0f;    // gradient multiplier (clipnorm / global_clipnorm), applied first
  float clip_value = 0.0f;    // > 0: clip each gradient element to [-clip_value, clip_value]
};

}  // namespace strata
