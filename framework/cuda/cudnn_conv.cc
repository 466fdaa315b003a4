// 2-D convolution on the GPU through cuDNN's convolution API (forward, backward data, backward
// filter). Strata's layouts are NHWC data and HWIO filters [KH, KW, I/groups, O] (Keras).
//
// Data stays NHWC: cuDNN's CUDNN_TENSOR_NHWC is what its tensor-core kernels prefer. Filters go
// through a small temporary in cuDNN's NHWC filter layout KRSC = [O, KH, KW, I/groups] (and the
// filter gradient comes back through one); filters are small next to activations. float64 is the
// exception: cuDNN convolves float64 reliably only in NCHW, so its data is transposed to NCHW and
// its filters to KCRS around the call (float64 is for checking, not for speed).
//
// cuDNN takes one padding per axis for both sides; TensorFlow's "same" puts an odd padding
// element after. The excess is padded explicitly: x is zero-padded into a temporary for the
// forward and filter passes, and the data gradient is computed on the padded shape and cropped.
//
// Each problem (direction, shapes, parameters, dtype, math mode, buffer alignment, device) gets
// one plan: its descriptors and the algorithm cudnnFind*AlgorithmEx measured fastest on the first
// call's buffers (cudnnGet*Algorithm_v7's heuristic when Find fails), cached for every later call.
// The math mode follows the dtype: tensor cores for 16-bit, TF32 for float32 unless
// config::enable_tensor_float_32_execution(false) (then plain FMA), IEEE double for float64.
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "framework/backend/gpu_algorithm_stats.h"
#include "framework/config/tensor_float_32.h"
#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/cuda_context.h"
#include "framework/cuda/dnn_helpers.h"
#include "framework/cuda/dnn_scaling.h"
#include "framework/cuda/library_handles.h"
#include "framework/cuda/plan_cache.h"

namespace strata {
namespace {

// Workspace an algorithm may use. Find measures within it; larger algorithms report failure.
constexpr size_t kMaxWorkspaceBytes = size_t(256) << 20;

enum class Direction : int64_t { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };

const char* op_name(Direction d) {
  switch (d) {
    case Direction::kForward: return "conv2d";
    case Direction::kBackwardData: return "conv2d_backward_data";
    case Direction::kBackwardFilter: return "conv2d_backward_filter";
  }
  return "conv2d";
}

// Axis permutations (out axis i = in axis perm[i]) between Strata's and cuDNN's layouts.
constexpr std::array<int, 4> kHwioToKrsc{3, 0, 1, 2};
constexpr std::array<int, 4> kKrscToHwio{1, 2, 3, 0};
constexpr std::array<int, 4> kHwioToKcrs{3, 2, 0, 1};
constexpr std::array<int, 4> kKcrsToHwio{2, 3, 1, 0};
constexpr std::array<int, 4> kNhwcToNchw{0, 3, 1, 2};
constexpr std::array<int, 4> kNchwToNhwc{0, 2, 3, 1};

bool uses_nchw(DType dtype) { return dtype == DType::kFloat64; }

cudnnMathType_t math_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return CUDNN_TENSOR_OP_MATH;
    case DType::kFloat32:
      return config::tensor_float_32_execution_enabled() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    default: return CUDNN_DEFAULT_MATH;
  }
}

// The padding cuDNN applies on both sides, and what is padded explicitly beyond it.
struct Padding {
  int sym_h = 0, sym_w = 0;
  int top = 0, bottom = 0, left = 0, right = 0;  // explicit excess
  bool explicit_needed() const { return top + bottom + left + right > 0; }
};

Padding split_padding(const Conv2DParams& p) {
  Padding pad;
  pad.sym_h = std::min(p.pad_top, p.pad_bottom);
  pad.sym_w = std::min(p.pad_left, p.pad_right);
  pad.top = p.pad_top - pad.sym_h;
  pad.bottom = p.pad_bottom - pad.sym_h;
  pad.left = p.pad_left - pad.sym_w;
  pad.right = p.pad_right - pad.sym_w;
  return pad;
}

// Every input of the plan search. Plain int64 fields: hashed bytewise.
struct ConvKey {
  int64_t device, direction, dtype, math;
  int64_t n, h, w, c;  // the input as cuDNN sees it (after explicit padding)
  int64_t o, oh, ow;
  int64_t kh, kw, groups;
  int64_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
  int64_t align_x, align_y;  // alignment of the x-side and y-side buffers cuDNN reads/writes
};

std::string problem_string(const ConvKey& k) {
  auto s = [](int64_t v) { return std::to_string(v); };
  return "input [" + s(k.n) + "," + s(k.h) + "," + s(k.w) + "," + s(k.c) + "], filters " + s(k.kh) +
         "x" + s(k.kw) + " to " + s(k.o) + " channels, strides (" + s(k.stride_h) + ", " +
         s(k.stride_w) + "), dilation (" + s(k.dilation_h) + ", " + s(k.dilation_w) +
         "), groups " + s(k.groups) + ", " + dtype_name(DType(k.dtype));
}

// cuDNN's legacy descriptors hold int dimensions and strides.
void check_int_sizes(const char* op, int device, const char* what, int64_t outer, int64_t inner) {
  if (outer > INT_MAX || inner > INT_MAX) {
    throw DeviceError(std::string(op) + " on /gpu:" + std::to_string(device) + ": " + what +
                      " is too large for cuDNN (dimensions and per-image sizes must stay below "
                      "2^31 elements); split the batch or the image");
  }
}

struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;  // the direction's cudnnConvolution*Algo_t
  size_t workspace_bytes = 0;

  ConvPlan() = default;
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;
  ~ConvPlan() {
    if (conv != nullptr) cudnnDestroyConvolutionDescriptor(conv);
    if (w != nullptr) cudnnDestroyFilterDescriptor(w);
    if (y != nullptr) cudnnDestroyTensorDescriptor(y);
    if (x != nullptr) cudnnDestroyTensorDescriptor(x);
  }
};

cuda::PlanCache<ConvKey, ConvPlan>& plan_cache() {
  static auto* cache = new cuda::PlanCache<ConvKey, ConvPlan>;  // never destroyed
  return *cache;
}

void make_descriptors(ConvPlan& plan, const ConvKey& k) {
  const int dev = int(k.device);
  const auto dtype = DType(k.dtype);
  const cudnnDataType_t dt = cuda::cudnn_data_type(dtype, op_name(Direction(k.direction)));
  const cudnnTensorFormat_t format = uses_nchw(dtype) ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
  STRATA_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan.x), dev);
  STRATA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan.x, format, dt, int(k.n), int(k.c), int(k.h),
                                                int(k.w)),
                     dev);
  STRATA_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan.y), dev);
  STRATA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan.y, format, dt, int(k.n), int(k.o), int(k.oh),
                                                int(k.ow)),
                     dev);
  // Filters: K = output channels, C = input channels per group; KRSC for NHWC, KCRS for NCHW.
  STRATA_CUDNN_CHECK(cudnnCreateFilterDescriptor(&plan.w), dev);
  STRATA_CUDNN_CHECK(cudnnSetFilter4dDescriptor(plan.w, dt, format, int(k.o), int(k.c / k.groups),
                                                int(k.kh), int(k.kw)),
                     dev);
  STRATA_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&plan.conv), dev);
  // 16-bit data accumulates in float (cuDNN's PSEUDO_HALF / PSEUDO_BFLOAT16 configurations).
  const cudnnDataType_t compute = dtype == DType::kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  STRATA_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(plan.conv, int(k.pad_h), int(k.pad_w),
                                                     int(k.stride_h), int(k.stride_w),
                                                     int(k.dilation_h), int(k.dilation_w),
                                                     CUDNN_CROSS_CORRELATION, compute),
                     dev);
  STRATA_CUDNN_CHECK(cudnnSetConvolutionGroupCount(plan.conv, int(k.groups)), dev);
  STRATA_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.conv, cudnnMathType_t(k.math)), dev);
}

// The device buffers of one call, as cuDNN's (x, w, y) roles; the direction decides which one
// is written.
struct ConvBuffers {
  void* x;
  void* w;
  void* y;
};

// The per-direction cuDNN entry points, so one search routine serves all three.
struct ForwardOps {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) {
    return cudnnGetConvolutionForwardAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvPlan& p, const ConvBuffers& b, int requested,
                            int* returned, Perf* perf, void* ws, size_t ws_bytes) {
    return cudnnFindConvolutionForwardAlgorithmEx(h, p.x, b.x, p.w, b.w, p.conv, p.y, b.y,
                                                  requested, returned, perf, ws, ws_bytes);
  }
  static cudnnStatus_t heuristic(cudnnHandle_t h, const ConvPlan& p, int requested, int* returned,
                                 Perf* perf) {
    return cudnnGetConvolutionForwardAlgorithm_v7(h, p.x, p.w, p.conv, p.y, requested, returned,
                                                  perf);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvPlan& p, size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, p.x, p.w, p.conv, p.y,
                                                   cudnnConvolutionFwdAlgo_t(p.algo), bytes);
  }
};

struct BackwardDataOps {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) {
    return cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvPlan& p, const ConvBuffers& b, int requested,
                            int* returned, Perf* perf, void* ws, size_t ws_bytes) {
    return cudnnFindConvolutionBackwardDataAlgorithmEx(h, p.w, b.w, p.y, b.y, p.conv, p.x, b.x,
                                                       requested, returned, perf, ws, ws_bytes);
  }
  static cudnnStatus_t heuristic(cudnnHandle_t h, const ConvPlan& p, int requested, int* returned,
                                 Perf* perf) {
    return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p.w, p.y, p.conv, p.x, requested,
                                                       returned, perf);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvPlan& p, size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.w, p.y, p.conv, p.x,
                                                        cudnnConvolutionBwdDataAlgo_t(p.algo),
                                                        bytes);
  }
};

struct BackwardFilterOps {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) {
    return cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvPlan& p, const ConvBuffers& b, int requested,
                            int* returned, Perf* perf, void* ws, size_t ws_bytes) {
    return cudnnFindConvolutionBackwardFilterAlgorithmEx(h, p.x, b.x, p.y, b.y, p.conv, p.w, b.w,
                                                         requested, returned, perf, ws, ws_bytes);
  }
  static cudnnStatus_t heuristic(cudnnHandle_t h, const ConvPlan& p, int requested, int* returned,
                                 Perf* perf) {
    return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p.x, p.y, p.conv, p.w, requested,
                                                         returned, perf);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvPlan& p, size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p.x, p.y, p.conv, p.w,
                                                          cudnnConvolutionBwdFilterAlgo_t(p.algo),
                                                          bytes);
  }
};

// The first (fastest) result that ran, fits the workspace budget and keeps the requested
// precision: with TF32 disabled only plain FMA kernels qualify, and float->half conversion never.
// In float16 and bfloat16 only deterministic algorithms qualify: the nondeterministic ones split
// the reduction and add the partial results into the 16-bit output with atomics, so the sum is
// rounded to 8 (bfloat16) or 11 (float16) bits at every addition. On an H200 that made a
// bfloat16 filter gradient 0.035 where the float32 sum is 0.199.
template <typename Perf>
const Perf* first_acceptable(const std::vector<Perf>& perfs, int returned,
                             cudnnMathType_t requested, DType dtype) {
  const bool sixteen_bit = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  for (int i = 0; i < returned && i < int(perfs.size()); ++i) {
    const Perf& p = perfs[size_t(i)];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kMaxWorkspaceBytes) continue;
    if (p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;
    if (requested == CUDNN_FMA_MATH && p.mathType != CUDNN_FMA_MATH) continue;
    if (sixteen_bit && p.determinism != CUDNN_DETERMINISTIC) continue;
    return &p;
  }
  return nullptr;
}

// STRATA_LOG_CUDNN_PLANS=1: the algorithm chosen for each problem and every result Find returned
// (fastest first), on stderr: what to read when a convolution is slower than it should be.
// Algorithm numbers are the direction's cudnn*Algo_t; math type 0 default, 1 tensor ops,
// 2 tensor ops allowing conversion, 3 FMA only.
template <typename Perf>
void log_plan(const ConvKey& k, int dev, const std::vector<Perf>& perfs, int found,
              const Perf& chosen) {
  const auto det = [](const Perf& p) {
    return p.determinism == CUDNN_DETERMINISTIC ? "deterministic" : "nondeterministic";
  };
  std::fprintf(stderr, "strata: cuDNN %s on /gpu:%d, %s: algorithm %d, math type %d, %s, %.3f ms%s\n",
               op_name(Direction(k.direction)), dev, problem_string(k).c_str(), int(chosen.algo),
               int(chosen.mathType), det(chosen), double(chosen.time),
               found > 0 ? "; Find measured:" : " (cuDNN's heuristic: Find gave nothing usable)");
  for (int i = 0; i < found && i < int(perfs.size()); ++i) {
    const Perf& p = perfs[size_t(i)];
    std::fprintf(stderr, "strata:   algorithm %d, math type %d, %s, status %d, %.1f MiB, %.3f ms\n",
                 int(p.algo), int(p.mathType), det(p), int(p.status),
                 double(p.memory) / double(1 << 20), double(p.time));
  }
}

// Scratch memory for Find: the full budget if the device has it, else less (algorithms that
// need more then report failure and are skipped), else none.
Tensor search_workspace(Device device) {
  for (size_t bytes : {kMaxWorkspaceBytes, size_t(32) << 20}) {
    try {
      return Tensor::empty(Shape{int64_t(bytes)}, DType::kUInt8, device);
    } catch (const Error&) {
      cudaGetLastError();  // a failed allocation leaves a (non-sticky) error behind: clear it
    }
  }
  return Tensor();
}

template <typename Ops>
std::shared_ptr<const ConvPlan> make_plan(const ConvKey& k, cudnnHandle_t handle,
                                          const ConvBuffers& buffers, Device device) {
  gpu::record_convolution_search();
  const int dev = device.index;
  auto plan = std::make_shared<ConvPlan>();
  make_descriptors(*plan, k);
  const auto requested = cudnnMathType_t(k.math);

  int max_count = 0;
  STRATA_CUDNN_CHECK(Ops::max_count(handle, &max_count), dev);
  std::vector<typename Ops::Perf> perfs(size_t(std::max(max_count, 1)));
  const typename Ops::Perf* chosen = nullptr;
  int found = 0;  // Find's results (0 where it failed)
  {
    // Find runs every algorithm on these buffers (writing the output, which the real call then
    // overwrites) and synchronises: acceptable once per key.
    Tensor workspace = search_workspace(device);
    int returned = 0;
    if (Ops::find(handle, *plan, buffers, int(perfs.size()), &returned, perfs.data(),
                  workspace.defined() ? workspace.raw_data() : nullptr,
                  workspace.defined() ? workspace.nbytes() : 0) == CUDNN_STATUS_SUCCESS) {
      chosen = first_acceptable(perfs, returned, requested, DType(k.dtype));
      found = returned;
    }
  }
  if (chosen == nullptr) {
    found = 0;
    int returned = 0;
    if (Ops::heuristic(handle, *plan, int(perfs.size()), &returned, perfs.data()) ==
        CUDNN_STATUS_SUCCESS) {
      chosen = first_acceptable(perfs, returned, requested, DType(k.dtype));
    }
  }
  if (chosen == nullptr) {
    throw DeviceError(std::string(op_name(Direction(k.direction))) + " on /gpu:" +
                      std::to_string(dev) + ": cuDNN has no usable algorithm for " +
                      problem_string(k) +
                      "; try another dtype, or float32 with TF32 enabled, or the CPU");
  }
  plan->algo = int(chosen->algo);
  if (std::getenv("STRATA_LOG_CUDNN_PLANS") != nullptr) log_plan(k, dev, perfs, found, *chosen);
  // The algorithm was measured in its own math mode: run it in that mode.
  STRATA_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, chosen->mathType), dev);
  size_t bytes = 0;
  STRATA_CUDNN_CHECK(Ops::workspace(handle, *plan, &bytes), dev);
  plan->workspace_bytes = std::max(bytes, chosen->memory);
  return plan;
}

// What every direction shares: the dtype checks, the padding split, the key.
struct ConvSetup {
  Device device;
  DType dtype;
  bool nchw;
  Padding pad;
  int64_t n, hp, wp, c;  // x after explicit padding
  int64_t oh, ow, o;
  int64_t kh, kw;
};

ConvSetup setup(Direction dir, const Tensor& x_like, const Tensor& y_like, const Tensor& w_like,
                const Tensor& other, const Conv2DParams& p) {
  const char* op = op_name(dir);
  const DType dtype = x_like.dtype();
  cuda::cudnn_data_type(dtype, op);  // DTypeError for other dtypes
  if (y_like.dtype() != dtype || w_like.dtype() != dtype || other.dtype() != dtype) {
    throw DTypeError(std::string(op) + ": data, filters and gradients must share one dtype, got " +
                     dtype_name(x_like.dtype()) + ", " + dtype_name(w_like.dtype()) + " and " +
                     dtype_name(y_like.dtype()));
  }
  ConvSetup s;
  s.device = x_like.device();
  s.dtype = dtype;
  s.nchw = uses_nchw(dtype);
  s.pad = split_padding(p);
  s.n = x_like.dim(0);
  s.hp = x_like.dim(1) + s.pad.top + s.pad.bottom;
  s.wp = x_like.dim(2) + s.pad.left + s.pad.right;
  s.c = x_like.dim(3);
  s.oh = y_like.dim(1);
  s.ow = y_like.dim(2);
  s.o = y_like.dim(3);
  s.kh = w_like.dim(0);
  s.kw = w_like.dim(1);
  check_int_sizes(op, s.device.index, "the input", s.n, s.hp * s.wp * s.c);
  check_int_sizes(op, s.device.index, "the output", s.n, s.oh * s.ow * s.o);
  check_int_sizes(op, s.device.index, "the filter", s.o, s.kh * s.kw * w_like.dim(2));
  return s;
}

ConvKey make_key(Direction dir, const ConvSetup& s, const Conv2DParams& p, const void* x_buffer,
                 const void* y_buffer) {
  return ConvKey{s.device.index, int64_t(dir), int64_t(s.dtype), int64_t(math_type(s.dtype)),
                 s.n, s.hp, s.wp, s.c, s.o, s.oh, s.ow, s.kh, s.kw, p.groups,
                 p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, s.pad.sym_h, s.pad.sym_w,
                 cuda::pointer_alignment(x_buffer), cuda::pointer_alignment(y_buffer)};
}

// HWIO [KH, KW, I/g, O] -> cuDNN's filter layout (KRSC, or KCRS for NCHW), in a temporary.
Tensor filter_to_cudnn(const Tensor& w, bool nchw) {
  const int64_t kh = w.dim(0), kw = w.dim(1), ig = w.dim(2), o = w.dim(3);
  Tensor out = Tensor::empty(nchw ? Shape{o, ig, kh, kw} : Shape{o, kh, kw, ig}, w.dtype(),
                             w.device());
  cuda::permute4d(w, nchw ? kHwioToKcrs : kHwioToKrsc, out);
  return out;
}

Tensor empty_cudnn_filter(const Tensor& w, bool nchw) {
  const int64_t kh = w.dim(0), kw = w.dim(1), ig = w.dim(2), o = w.dim(3);
  return Tensor::empty(nchw ? Shape{o, ig, kh, kw} : Shape{o, kh, kw, ig}, w.dtype(), w.device());
}

// NHWC data as cuDNN sees it: itself, or an NCHW copy for float64.
Tensor data_to_cudnn(const Tensor& nhwc, bool nchw) {
  if (!nchw) return nhwc;
  Tensor out = Tensor::empty(Shape{nhwc.dim(0), nhwc.dim(3), nhwc.dim(1), nhwc.dim(2)},
                             nhwc.dtype(), nhwc.device());
  cuda::permute4d(nhwc, kNhwcToNchw, out);
  return out;
}

// A buffer for cuDNN to write NHWC-shaped `target`'s values into: target itself, or an NCHW
// temporary that data_from_cudnn copies back.
Tensor cudnn_output_for(const Tensor& target, bool nchw) {
  if (!nchw) return target;
  return Tensor::empty(Shape{target.dim(0), target.dim(3), target.dim(1), target.dim(2)},
                       target.dtype(), target.device());
}

void data_from_cudnn(const Tensor& written, bool nchw, Tensor& target) {
  if (nchw) cuda::permute4d(written, kNchwToNhwc, target);
}

// x padded by the explicit excess (zeros), or x itself.
Tensor padded_input(const Tensor& x, const ConvSetup& s) {
  if (!s.pad.explicit_needed()) return x;
  Tensor out = Tensor::empty(Shape{s.n, s.hp, s.wp, s.c}, x.dtype(), x.device());
  cuda::pad_spatial(x, s.pad.top, s.pad.left, 0.0, out);
  return out;
}

Tensor workspace_for(const ConvPlan& plan, Device device) {
  if (plan.workspace_bytes == 0) return Tensor();
  return Tensor::empty(Shape{int64_t(plan.workspace_bytes)}, DType::kUInt8, device);
}

void* ptr_or_null(const Tensor& t) { return t.defined() ? t.raw_data() : nullptr; }

void zero_fill(Tensor& t) {
  STRATA_CUDA_CHECK(cudaMemsetAsync(t.raw_data(), 0, t.nbytes(), cuda::stream(t.device())),
                    t.device().index);
}

}  // namespace

void CudaBackend::conv2d_forward(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                                 Tensor& y) {
  cuda::DeviceGuard guard(y.device());
  const ConvSetup s = setup(Direction::kForward, x, y, w, w, p);
  if (y.numel() == 0) return;
  if (x.numel() == 0 || w.numel() == 0) return zero_fill(y);  // no input channels: sums of nothing

  const Tensor xc = data_to_cudnn(padded_input(x, s), s.nchw);
  const Tensor wc = filter_to_cudnn(w, s.nchw);
  Tensor yc = cudnn_output_for(y, s.nchw);
  const ConvKey key = make_key(Direction::kForward, s, p, xc.raw_data(), yc.raw_data());
  cudnnHandle_t handle = cuda::cudnn_handle(s.device);
  const auto plan = plan_cache().get(key, [&] {
    return make_plan<ForwardOps>(key, handle, {xc.raw_data(), wc.raw_data(), yc.raw_data()},
                                 s.device);
  });
  const Tensor workspace = workspace_for(*plan, s.device);
  const cuda::Scaling scale(s.dtype);
  STRATA_CUDNN_CHECK(cudnnConvolutionForward(handle, scale.one(), plan->x, xc.raw_data(), plan->w,
                                             wc.raw_data(), plan->conv,
                                             cudnnConvolutionFwdAlgo_t(plan->algo),
                                             ptr_or_null(workspace), plan->workspace_bytes,
                                             scale.zero(), plan->y, yc.raw_data()),
                     s.device.index);
  data_from_cudnn(yc, s.nchw, y);
}

void CudaBackend::conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DParams& p,
                                       Tensor& dx) {
  cuda::DeviceGuard guard(dx.device());
  const ConvSetup s = setup(Direction::kBackwardData, dx, dy, w, w, p);
  if (dx.numel() == 0) return;
  if (dy.numel() == 0 || w.numel() == 0) return zero_fill(dx);

  // The gradient of the explicitly padded input, cropped to dx at the end.
  Tensor dx_padded =
      s.pad.explicit_needed() ? Tensor::empty(Shape{s.n, s.hp, s.wp, s.c}, dx.dtype(), dx.device())
                              : dx;
  const Tensor dyc = data_to_cudnn(dy, s.nchw);
  const Tensor wc = filter_to_cudnn(w, s.nchw);
  Tensor dxc = cudnn_output_for(dx_padded, s.nchw);
  const ConvKey key = make_key(Direction::kBackwardData, s, p, dxc.raw_data(), dyc.raw_data());
  cudnnHandle_t handle = cuda::cudnn_handle(s.device);
  const auto plan = plan_cache().get(key, [&] {
    return make_plan<BackwardDataOps>(key, handle,
                                      {dxc.raw_data(), wc.raw_data(), dyc.raw_data()}, s.device);
  });
  const Tensor workspace = workspace_for(*plan, s.device);
  const cuda::Scaling scale(s.dtype);
  STRATA_CUDNN_CHECK(cudnnConvolutionBackwardData(handle, scale.one(), plan->w, wc.raw_data(),
                                                  plan->y, dyc.raw_data(), plan->conv,
                                                  cudnnConvolutionBwdDataAlgo_t(plan->algo),
                                                  ptr_or_null(workspace), plan->workspace_bytes,
                                                  scale.zero(), plan->x, dxc.raw_data()),
                     s.device.index);
  data_from_cudnn(dxc, s.nchw, dx_padded);
  if (s.pad.explicit_needed()) cuda::crop_spatial(dx_padded, s.pad.top, s.pad.left, dx);
}

void CudaBackend::conv2d_backward_filter(const Tensor& x, const Tensor& dy, const Conv2DParams& p,
                                         Tensor& dw) {
  cuda::DeviceGuard guard(dw.device());
  const ConvSetup s = setup(Direction::kBackwardFilter, x, dy, dw, dw, p);
  if (dw.numel() == 0) return;
  if (x.numel() == 0 || dy.numel() == 0) return zero_fill(dw);

  const Tensor xc = data_to_cudnn(padded_input(x, s), s.nchw);
  const Tensor dyc = data_to_cudnn(dy, s.nchw);
  Tensor dwc = empty_cudnn_filter(dw, s.nchw);
  const ConvKey key = make_key(Direction::kBackwardFilter, s, p, xc.raw_data(), dyc.raw_data());
  cudnnHandle_t handle = cuda::cudnn_handle(s.device);
  const auto plan = plan_cache().get(key, [&] {
    return make_plan<BackwardFilterOps>(key, handle,
                                        {xc.raw_data(), dwc.raw_data(), dyc.raw_data()}, s.device);
  });
  const Tensor workspace = workspace_for(*plan, s.device);
  const cuda::Scaling scale(s.dtype);
  STRATA_CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle, scale.one(), plan->x, xc.raw_data(),
                                                    plan->y, dyc.raw_data(), plan->conv,
                                                    cudnnConvolutionBwdFilterAlgo_t(plan->algo),
                                                    ptr_or_null(workspace),
                                                    plan->workspace_bytes, scale.zero(), plan->w,
                                                    dwc.raw_data()),
                     s.device.index);
  cuda::permute4d(dwc, s.nchw ? kKcrsToHwio : kKrscToHwio, dw);
}

}  // namespace strata
