#include "framework/core/storage.h"

#include "framework/backend/backend.h"

namespace strata {

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  Backend& backend = backend_for(device);
  void* data = backend.allocate(nbytes, device);
  return std::shared_ptr<Storage>(new Storage(data, nbytes, device));
}

Storage::~Storage() { backend_for(device_).deallocate(data_, nbytes_, device_); }

}  // namespace strata
