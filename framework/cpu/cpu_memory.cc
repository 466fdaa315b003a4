// CPU memory: 64-byte aligned (one cache line, one AVX-512 register) so vector loops and oneDNN
// get aligned data; large blocks are cached for reuse (cpu_caching_allocator.h).
#include <cstring>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/cpu_caching_allocator.h"

namespace strata {

CpuBackend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

void* CpuBackend::allocate(size_t nbytes, Device) { return cpu::cached_allocate(nbytes); }

void CpuBackend::deallocate(void* ptr, size_t nbytes, Device) { cpu::cached_deallocate(ptr, nbytes); }

void CpuBackend::copy_bytes(const void* src, Device, void* dst, Device, size_t nbytes) {
  if (nbytes) std::memcpy(dst, src, nbytes);
}

}  // namespace strata
