// The device scope (TensorFlow's `with tf.device(...)`): where new tensors and variables go when
// the caller names no device. Per thread, so each replica thread of a distribution strategy
// places its work on its own device.
//
//   { DeviceScope on(Device::cpu(1)); Tensor t = zeros({4}); }   // t lives on /cpu:1
#pragma once

#include "framework/core/device.h"

namespace strata {

// The innermost DeviceScope's device on this thread; /cpu:0 outside every scope.
Device default_device();

class DeviceScope {
 public:
  explicit DeviceScope(Device device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device previous_;
};

}  // namespace strata
