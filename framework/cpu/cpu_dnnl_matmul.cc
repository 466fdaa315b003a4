// Matrix multiplication on the CPU through oneDNN's matmul primitive. Transposes are expressed as
// strides of the memory descriptors (oneDNN reads the operand transposed; no copy), and a weight
// matrix shared across a batch is a batch dimension of 1 that oneDNN broadcasts.
#include <string>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/cpu_widen.h"
#include "framework/cpu/dnnl_context.h"

namespace strata {
namespace {

using dnnl::memory;

struct MatmulKey {
  int64_t batch, m, n, k;
  int64_t transpose_a, transpose_b, b_batched;
};

struct MatmulEntry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  memory::desc a_md, b_md, out_md;
};

cpu::PrimitiveCache<MatmulKey, MatmulEntry>& matmul_cache() {
  static cpu::PrimitiveCache<MatmulKey, MatmulEntry> cache;
  return cache;
}

MatmulEntry make_matmul(const MatmulKey& k) {
  const int64_t bb = k.b_batched ? k.batch : 1;
  memory::desc a_md, b_md, out_md;
  if (k.batch == 1) {
    // Plain 2-D problem: oneDNN's 2-D path dispatches straight to its sgemm kernels.
    a_md = cpu::strided_desc({k.m, k.k}, k.transpose_a ? memory::dims{1, k.m} : memory::dims{k.k, 1});
    b_md = cpu::strided_desc({k.k, k.n}, k.transpose_b ? memory::dims{1, k.k} : memory::dims{k.n, 1});
    out_md = cpu::strided_desc({k.m, k.n}, {k.n, 1});
  } else {
    a_md = cpu::strided_desc({k.batch, k.m, k.k}, k.transpose_a ? memory::dims{k.m * k.k, 1, k.m}
                                                                : memory::dims{k.m * k.k, k.k, 1});
    b_md = cpu::strided_desc({bb, k.k, k.n}, k.transpose_b ? memory::dims{k.k * k.n, 1, k.k}
                                                           : memory::dims{k.k * k.n, k.n, 1});
    out_md = cpu::strided_desc({k.batch, k.m, k.n}, {k.m * k.n, k.n, 1});
  }
  dnnl::matmul::desc desc(a_md, b_md, out_md);
  dnnl::matmul::primitive_desc pd(desc, cpu::dnnl_default_attr(), cpu::dnnl_engine());
  return MatmulEntry{pd, dnnl::matmul(pd), a_md, b_md, out_md};
}

}  // namespace

void CpuBackend::matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                        Tensor& out) {
  if (cpu::any_16bit_float({a, b})) {  // mixed precision: computed in float32 (cpu_widen.h)
    Tensor out32 = cpu::float32_like(out);
    matmul(cpu::widened(a), cpu::widened(b), transpose_a, transpose_b, out32);
    return cpu::narrow_into(out32, out);
  }
  cpu::check_float32("matmul", {a, b});
  const int ra = a.rank();
  const int64_t m = transpose_a ? a.dim(ra - 1) : a.dim(ra - 2);
  const int64_t k = transpose_a ? a.dim(ra - 2) : a.dim(ra - 1);
  const int64_t n = transpose_b ? b.dim(b.rank() - 2) : b.dim(b.rank() - 1);
  int64_t batch = 1;
  for (int i = 0; i < ra - 2; ++i) batch *= a.dim(i);
  const bool b_batched = b.rank() > 2;

  if (out.numel() == 0) return;
  if (k == 0) {  // empty inner dimension: the sum of nothing
    fill(out, 0.0);
    return;
  }

  MatmulKey key{batch, m, n, k, transpose_a, transpose_b, b_batched};
  if (!b_batched && !transpose_a && batch > 1) {
    // A shared b and row-major a: the batch is just more rows of one big GEMM.
    key.m = batch * m;
    key.batch = 1;
  }
  auto entry = matmul_cache().get(key, [&] { return make_matmul(key); });
  cpu::execute(entry->prim, entry->pd,
               {{DNNL_ARG_SRC, cpu::make_memory(entry->a_md, a.raw_data())},
                {DNNL_ARG_WEIGHTS, cpu::make_memory(entry->b_md, b.raw_data())},
                {DNNL_ARG_DST, cpu::make_memory(entry->out_md, out.raw_data())}});
}

}  // namespace strata
