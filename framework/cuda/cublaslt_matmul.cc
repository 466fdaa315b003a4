// Matrix multiplication on the GPU through cuBLASLt.
//
// Strata's matrices are row-major; cuBLASLt's are column-major. A row-major [R, C] buffer is the
// column-major C x R matrix, its transpose, so out = op(a) @ op(b) is computed as
// out^T = op(b)^T @ op(a)^T: cuBLASLt's "A" is our b, its "B" is our a, and its N x M column-major
// result is exactly our row-major [M, N] out. No data moves; transposes are cuBLASLt op flags.
//
// A batch is a strided batch; a b shared across the batch has batch stride 0, or, when a is not
// transposed, the batch is folded into M (one bigger GEMM, which cuBLASLt runs faster).
//
// Each problem (shape, dtype, transposes, TF32 mode, pointer alignments, device) gets one plan:
// the descriptors and the algorithm cuBLASLt's heuristic picked, cached for every later call.
#include <cublasLt.h>

#include <climits>
#include <string>

#include "framework/backend/gpu_algorithm_stats.h"
#include "framework/config/tensor_float_32.h"
#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/cuda_context.h"
#include "framework/cuda/library_handles.h"
#include "framework/cuda/plan_cache.h"

namespace strata {
namespace {

// The workspace the heuristic may ask for: NVIDIA's recommendation for Hopper. Each call
// allocates only what its algorithm actually needs (often nothing).
constexpr uint64_t kMaxWorkspaceBytes = uint64_t(32) << 20;

struct MatmulKey {
  int64_t device, dtype, tf32;
  int64_t batch, m, n, k;
  int64_t transpose_a, transpose_b, b_batched;
  int64_t align_a, align_b, align_out;  // bytes, see pointer_alignment
};

// cuBLASLt's names: "A" is our b, "B" is our a, C = D is out (see the file comment).
struct MatmulPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t lt_a = nullptr, lt_b = nullptr, lt_c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace_bytes = 0;
  bool double_scale = false;  // alpha/beta are doubles (float64), else floats

  MatmulPlan() = default;
  MatmulPlan(const MatmulPlan&) = delete;
  MatmulPlan& operator=(const MatmulPlan&) = delete;
  ~MatmulPlan() {
    if (lt_c != nullptr) cublasLtMatrixLayoutDestroy(lt_c);
    if (lt_b != nullptr) cublasLtMatrixLayoutDestroy(lt_b);
    if (lt_a != nullptr) cublasLtMatrixLayoutDestroy(lt_a);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
};

cuda::PlanCache<MatmulKey, MatmulPlan>& plan_cache() {
  static auto* cache = new cuda::PlanCache<MatmulKey, MatmulPlan>;  // never destroyed
  return *cache;
}

struct LtTypes {
  cudaDataType_t data;
  cudaDataType_t scale;
  cublasComputeType_t compute;
};

// 16-bit inputs multiply on tensor cores and accumulate in float; float32 may use TF32 tensor
// cores (config::enable_tensor_float_32_execution); float64 stays float64 throughout.
LtTypes lt_types(DType dtype, bool tf32) {
  switch (dtype) {
    case DType::kFloat32:
      return {CUDA_R_32F, CUDA_R_32F, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
    case DType::kFloat16: return {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::kBFloat16: return {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::kFloat64: return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    default: break;
  }
  throw DTypeError(std::string("matmul: the CUDA backend supports float16, bfloat16, float32 and "
                               "float64 operands, got ") + dtype_name(dtype));
}

// Creates `layout` (owned by the plan from the start, so a failing attribute call leaks nothing).
void make_layout(cublasLtMatrixLayout_t& layout, cudaDataType_t type, uint64_t rows, uint64_t cols,
                 int64_t ld, int32_t batch, int64_t batch_stride, int device) {
  STRATA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld), device);
  if (batch > 1) {
    STRATA_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                         &batch, sizeof(batch)),
                        device);
    STRATA_CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                         &batch_stride, sizeof(batch_stride)),
        device);
  }
}

// RAII for the heuristic's preference descriptor (only needed while planning).
struct Preference {
  cublasLtMatmulPreference_t pref = nullptr;
  ~Preference() {
    if (pref != nullptr) cublasLtMatmulPreferenceDestroy(pref);
  }
};

std::string problem_string(const MatmulKey& k) {
  return "batch " + std::to_string(k.batch) + ", M=" + std::to_string(k.m) +
         ", N=" + std::to_string(k.n) + ", K=" + std::to_string(k.k) + ", " +
         dtype_name(DType(k.dtype)) + (k.transpose_a ? ", transpose_a" : "") +
         (k.transpose_b ? ", transpose_b" : "");
}

std::shared_ptr<const MatmulPlan> make_plan(const MatmulKey& k, cublasLtHandle_t handle) {
  gpu::record_matmul_search();
  const int dev = int(k.device);
  const LtTypes types = lt_types(DType(k.dtype), k.tf32 != 0);
  auto plan = std::make_shared<MatmulPlan>();
  plan->double_scale = types.scale == CUDA_R_64F;

  STRATA_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->op, types.compute, types.scale), dev);
  const cublasOperation_t op_b = k.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's A
  const cublasOperation_t op_a = k.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's B
  STRATA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &op_b,
                                                     sizeof(op_b)),
                      dev);
  STRATA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &op_a,
                                                     sizeof(op_a)),
                      dev);

  const auto batch = int32_t(k.batch);
  const auto m = uint64_t(k.m), n = uint64_t(k.n), kk = uint64_t(k.k);
  // Our b, row-major [K, N] (or [N, K] transposed), read column-major: N x K (or K x N). A b
  // shared across the batch has batch stride 0.
  const int64_t b_stride = k.b_batched ? k.k * k.n : 0;
  if (k.transpose_b) {
    make_layout(plan->lt_a, types.data, kk, n, k.k, batch, b_stride, dev);
  } else {
    make_layout(plan->lt_a, types.data, n, kk, k.n, batch, b_stride, dev);
  }
  // Our a, row-major [M, K] (or [K, M] transposed), read column-major: K x M (or M x K).
  if (k.transpose_a) {
    make_layout(plan->lt_b, types.data, m, kk, k.m, batch, k.m * k.k, dev);
  } else {
    make_layout(plan->lt_b, types.data, kk, m, k.k, batch, k.m * k.k, dev);
  }
  // out, row-major [M, N], read column-major: N x M.
  make_layout(plan->lt_c, types.data, n, m, k.n, batch, k.m * k.n, dev);

  Preference pref;
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref.pref), dev);
  const uint64_t max_workspace = kMaxWorkspaceBytes;
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
                          pref.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                          sizeof(max_workspace)),
                      dev);
  // The heuristic assumes 256-byte aligned buffers unless told otherwise.
  const auto align_lt_a = uint32_t(k.align_b), align_lt_b = uint32_t(k.align_a),
             align_out = uint32_t(k.align_out);
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
                          pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_lt_a,
                          sizeof(align_lt_a)),
                      dev);
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
                          pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_lt_b,
                          sizeof(align_lt_b)),
                      dev);
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
                          pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_out,
                          sizeof(align_out)),
                      dev);
  STRATA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
                          pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_out,
                          sizeof(align_out)),
                      dev);

  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  STRATA_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, plan->op, plan->lt_a, plan->lt_b,
                                                     plan->lt_c, plan->lt_c, pref.pref, 1, &result,
                                                     &returned),
                      dev);
  if (returned < 1 || result.state != CUBLAS_STATUS_SUCCESS) {
    throw DeviceError("matmul on /gpu:" + std::to_string(dev) +
                      ": cuBLASLt has no algorithm for " + problem_string(k) +
                      "; run it on the CPU or in another dtype");
  }
  plan->algo = result.algo;
  plan->workspace_bytes = result.workspaceSize;
  return plan;
}

}  // namespace

void CudaBackend::matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                         Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  const int dev = out.device().index;
  const int ra = a.rank();
  const int64_t m = transpose_a ? a.dim(ra - 1) : a.dim(ra - 2);
  const int64_t k = transpose_a ? a.dim(ra - 2) : a.dim(ra - 1);
  const int64_t n = transpose_b ? b.dim(b.rank() - 2) : b.dim(b.rank() - 1);
  int64_t batch = 1;
  for (int i = 0; i < ra - 2; ++i) batch *= a.dim(i);
  const bool b_batched = b.rank() > 2;
  const bool tf32 = a.dtype() == DType::kFloat32 && config::tensor_float_32_execution_enabled();
  lt_types(a.dtype(), tf32);  // DTypeError for dtypes cuBLASLt is not used with

  if (out.numel() == 0) return;
  cudaStream_t stream = cuda::stream(out.device());
  if (k == 0) {  // empty inner dimension: the sum of nothing (all-zero bits are 0 in every dtype)
    STRATA_CUDA_CHECK(cudaMemsetAsync(out.raw_data(), 0, out.nbytes(), stream), dev);
    return;
  }

  MatmulKey key{dev, int64_t(a.dtype()), tf32 ? 1 : 0, batch, m, n, k,
                transpose_a ? 1 : 0, transpose_b ? 1 : 0, b_batched ? 1 : 0,
                cuda::pointer_alignment(a.raw_data()), cuda::pointer_alignment(b.raw_data()),
                cuda::pointer_alignment(out.raw_data())};
  if (!b_batched && !transpose_a && batch > 1) {
    // A shared b and row-major a: the batch is just more rows of one GEMM.
    key.m = batch * m;
    key.batch = 1;
  }
  if (key.batch > INT32_MAX) {
    throw DeviceError("matmul on /gpu:" + std::to_string(dev) + ": a batch of " +
                      std::to_string(key.batch) + " matrices exceeds cuBLASLt's limit of " +
                      std::to_string(INT32_MAX) + "; split the batch");
  }

  cublasLtHandle_t handle = cuda::cublaslt_handle(out.device());
  const auto plan = plan_cache().get(key, [&] { return make_plan(key, handle); });
  Tensor workspace;  // stream-ordered allocator: safe to release once the GEMM is queued
  if (plan->workspace_bytes > 0) {
    workspace = Tensor::empty(Shape{int64_t(plan->workspace_bytes)}, DType::kUInt8, out.device());
  }
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const void* alpha = plan->double_scale ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = plan->double_scale ? static_cast<const void*>(&zero_d) : &zero_f;
  // beta = 0: cuBLASLt does not read C, so out's uninitialised contents never matter.
  STRATA_CUBLAS_CHECK(cublasLtMatmul(handle, plan->op, alpha, b.raw_data(), plan->lt_a,
                                     a.raw_data(), plan->lt_b, beta, out.raw_data(), plan->lt_c,
                                     out.raw_data(), plan->lt_c, &plan->algo,
                                     workspace.defined() ? workspace.raw_data() : nullptr,
                                     plan->workspace_bytes, stream),
                      dev);
}

}  // namespace strata
