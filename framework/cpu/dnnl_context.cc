#include "framework/cpu/dnnl_context.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>

#include "framework/core/error.h"
#include "framework/cpu/parallel.h"

namespace strata::cpu {

void check_float32(const char* op,
                   std::initializer_list<std::reference_wrapper<const Tensor>> tensors) {
  bool all_float32 = true;
  std::string got;
  for (const Tensor& t : tensors) {
    all_float32 = all_float32 && t.dtype() == DType::kFloat32;
    got += std::string(got.empty() ? "" : " and ") + dtype_name(t.dtype());
  }
  if (!all_float32) {
    throw DTypeError(std::string(op) + ": the CPU backend supports float32 only, got " + got);
  }
}

const dnnl::engine& dnnl_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream dnnl_stream() {
  ensure_threads_initialised();
  return dnnl::stream(dnnl_engine());
}

dnnl::primitive_attr dnnl_default_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

namespace {
struct AlignedBuffer {
  void* data = nullptr;
  size_t capacity = 0;
  ~AlignedBuffer() { std::free(data); }
};
}  // namespace

void* thread_buffer(BufferSlot slot, size_t bytes) {
  thread_local AlignedBuffer buffers[kNumBufferSlots];
  AlignedBuffer& b = buffers[slot];
  if (bytes > b.capacity) {
    // Grow geometrically so shapes that creep up don't reallocate every call.
    size_t capacity = std::max(bytes, b.capacity + b.capacity / 2);
    capacity = (capacity + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, capacity);
    if (p == nullptr) {
      throw ResourceExhaustedError("CPU: cannot allocate a " + std::to_string(capacity) +
                                   "-byte kernel scratch buffer; free memory or use smaller "
                                   "batches");
    }
    std::free(b.data);
    b.data = p;
    b.capacity = capacity;
  }
  return b.data;
}

void execute(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
             std::unordered_map<int, dnnl::memory> args) {
  const dnnl::memory::desc scratch_md = pd.scratchpad_desc();
  const size_t scratch_bytes = scratch_md.get_size();
  if (scratch_bytes > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 make_memory(scratch_md, thread_buffer(kScratchSlot, scratch_bytes)));
  }
  dnnl::stream stream = dnnl_stream();
  prim.execute(stream, args);
  stream.wait();
}

dnnl::memory::desc nhwc_desc(int64_t n, int64_t h, int64_t w, int64_t c) {
  return dnnl::memory::desc({n, c, h, w}, dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::nhwc);
}

dnnl::memory::desc hwio_weights_desc(int64_t kh, int64_t kw, int64_t in_per_group,
                                     int64_t out_channels, int64_t groups) {
  // HWIO element (y, x, i, o) lives at ((y*KW + x)*I + i)*O + o; group g owns outputs
  // [g*O/G, (g+1)*O/G).
  const int64_t o = out_channels, i = in_per_group;
  if (groups == 1) {
    return strided_desc({o, i, kh, kw}, {1, o, kw * i * o, i * o});
  }
  const int64_t og = out_channels / groups;
  return strided_desc({groups, og, i, kh, kw}, {og, 1, o, kw * i * o, i * o});
}

dnnl::memory::desc strided_desc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

}  // namespace strata::cpu
