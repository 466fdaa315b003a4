// CPU memory: 64-byte aligned (one cache line, one AVX-512 register) so vector loops and oneDNN
// get aligned data.
#include <cstdlib>
#include <cstring>
#include <new>

#include "framework/cpu/cpu_backend.h"

namespace strata {

CpuBackend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

void* CpuBackend::allocate(size_t nbytes, Device) {
  const size_t rounded = ((nbytes + 63) / 64) * 64;
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (p == nullptr) {
    throw Error("CPU allocator: out of memory allocating " + std::to_string(nbytes) + " bytes");
  }
  return p;
}

void CpuBackend::deallocate(void* ptr, size_t, Device) { std::free(ptr); }

void CpuBackend::copy_bytes(const void* src, Device, void* dst, Device, size_t nbytes) {
  if (nbytes) std::memcpy(dst, src, nbytes);
}

}  // namespace strata
