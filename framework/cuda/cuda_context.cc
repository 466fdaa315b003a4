#include "framework/cuda/cuda_context.h"

#include <array>
#include <mutex>
#include <string>

namespace strata::cuda {
namespace {

constexpr int kMaxDevices = 64;

struct Streams {
  std::array<std::once_flag, kMaxDevices> once;
  std::array<cudaStream_t, kMaxDevices> stream{};
};

Streams& streams() {
  static Streams* s = new Streams;  // never destroyed: tensors may be freed during teardown
  return *s;
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* what, int device) {
  throw DeviceError(std::string("CUDA error in ") + what + " on /gpu:" + std::to_string(device) +
                    ": " + cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")");
}

void check_launch(const char* kernel, int device) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw_cuda_error(status, kernel, device);
}

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no driver" / "no device" status
      return 0;
    }
    return n < kMaxDevices ? n : kMaxDevices;
  }();
  return count;
}

void check_device(Device device) {
  const int n = device_count();
  if (device.type != DeviceType::kCUDA || device.index < 0 || device.index >= n) {
    throw DeviceError("device " + device.to_string() + ": " +
                      (n == 0 ? std::string("no GPU is visible to this process (no NVIDIA driver "
                                            "or GPU, or CUDA_VISIBLE_DEVICES hides them); use "
                                            "/cpu:0")
                              : "this machine has " + std::to_string(n) + " GPU(s), /gpu:0 to /gpu:" +
                                    std::to_string(n - 1)));
  }
}

cudaStream_t stream(Device device) {
  check_device(device);
  Streams& s = streams();
  std::call_once(s.once[size_t(device.index)], [&] {
    DeviceGuard guard(device.index);
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream[size_t(device.index)],
                                                cudaStreamNonBlocking),
                      device.index);
  });
  return s.stream[size_t(device.index)];
}

DeviceGuard::DeviceGuard(int index) {
  STRATA_CUDA_CHECK(cudaGetDevice(&previous_), index);
  if (previous_ != index) STRATA_CUDA_CHECK(cudaSetDevice(index), index);
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
}

void synchronize(Device device) {
  DeviceGuard guard(device.index);
  STRATA_CUDA_CHECK(cudaStreamSynchronize(stream(device)), device.index);
}

}  // namespace strata::cuda
