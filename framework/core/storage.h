// A refcounted block of device memory. Tensors and their views share one Storage.
#pragma once

#include <cstddef>
#include <memory>

#include "framework/core/device.h"

namespace strata {

class Storage {
 public:
  // Allocates `nbytes` on `device` through that device's backend (64-byte aligned on the CPU).
  static std::shared_ptr<Storage> allocate(size_t nbytes, Device device);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  Storage(void* data, size_t nbytes, Device device)
      : data_(data), nbytes_(nbytes), device_(device) {}
  void* data_;
  size_t nbytes_;
  Device device_;
};

}  // namespace strata
