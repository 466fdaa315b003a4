#include "distribute/collectives/gloo/abortable_tcp_device.h"

#include <gloo/transport/tcp/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/tcp/unbound_buffer.h>

#include <netdb.h>
#include <sys/socket.h>

#include <stdexcept>
#include <utility>

namespace strata::distribute {

namespace tcp = gloo::transport::tcp;

// A tcp::UnboundBuffer that is listed in the registry while it lives.
class TrackedUnboundBuffer final : public tcp::UnboundBuffer {
 public:
  TrackedUnboundBuffer(const std::shared_ptr<tcp::Context>& context, void* ptr, size_t size,
                       std::shared_ptr<UnboundBufferRegistry> registry)
      : tcp::UnboundBuffer(context, ptr, size), registry_(std::move(registry)) {
    registry_->add(this);
  }
  ~TrackedUnboundBuffer() override { registry_->remove(this); }

  // Wakes this buffer's waits (now and later) with `error`, as Gloo does when its connection
  // fails.
  void fail(std::exception_ptr error) { signalException(std::move(error)); }

 private:
  const std::shared_ptr<UnboundBufferRegistry> registry_;
};

void UnboundBufferRegistry::add(TrackedUnboundBuffer* buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.insert(buffer);
  // A collective that starts after the abort fails at its first wait, too.
  if (error_) buffer->fail(error_);
}

void UnboundBufferRegistry::remove(TrackedUnboundBuffer* buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.erase(buffer);
}

void UnboundBufferRegistry::fail_all(std::exception_ptr error) {
  // Under the lock, so no buffer is destroyed meanwhile (its destructor waits in remove()). Each
  // buffer's own lock is taken inside; Gloo never holds a buffer's lock while creating or
  // destroying another buffer, so the order cannot deadlock.
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_) error_ = error;
  for (TrackedUnboundBuffer* buffer : live_) buffer->fail(error);
}

namespace {

class AbortableContext final : public tcp::Context {
 public:
  AbortableContext(std::shared_ptr<tcp::Device> device, int rank, int size,
                   std::shared_ptr<UnboundBufferRegistry> registry)
      : tcp::Context(std::move(device), rank, size), registry_(std::move(registry)) {}

  std::unique_ptr<gloo::transport::UnboundBuffer> createUnboundBuffer(void* ptr,
                                                                      size_t size) override {
    return std::make_unique<TrackedUnboundBuffer>(shared_from_this(), ptr, size, registry_);
  }

 private:
  const std::shared_ptr<UnboundBufferRegistry> registry_;
};

class AbortableDevice final : public tcp::Device {
 public:
  AbortableDevice(const tcp::attr& resolved, std::shared_ptr<UnboundBufferRegistry> registry)
      : tcp::Device(resolved), registry_(std::move(registry)) {}

  std::shared_ptr<gloo::transport::Context> createContext(int rank, int size) override {
    return std::make_shared<AbortableContext>(shared_from_this(), rank, size, registry_);
  }

  // The attributes Gloo's CreateDevice resolved (address, family) for `device`.
  static tcp::attr attributes_of(const tcp::Device& device) {
    return device.*(&AbortableDevice::attr_);
  }

 private:
  const std::shared_ptr<UnboundBufferRegistry> registry_;
};

}  // namespace

std::shared_ptr<gloo::transport::Device> create_abortable_tcp_device(
    const tcp::attr& attr, std::shared_ptr<UnboundBufferRegistry> registry) {
  // Gloo's lookup reads getaddrinfo's result even when the name does not resolve (it checks
  // only for -1, not the EAI_* codes): a segmentation fault where /etc/hosts lacks the name.
  {
    addrinfo hints{};
    hints.ai_family = attr.ai_family;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rv = getaddrinfo(attr.hostname.c_str(), nullptr, &hints, &found);
    if (rv != 0) {
      throw std::runtime_error("the name '" + attr.hostname + "' does not resolve (" +
                               gai_strerror(rv) + "): use an IP address of this machine in the "
                               "cluster spec, or add the name to /etc/hosts");
    }
    freeaddrinfo(found);
  }
  // Gloo's address lookup is private to its device.cc: a plain device made by CreateDevice
  // does it (and proves the address can be bound); the abortable one takes its result.
  tcp::attr resolved;
  {
    const std::shared_ptr<gloo::transport::Device> probe = tcp::CreateDevice(attr);
    resolved = AbortableDevice::attributes_of(static_cast<const tcp::Device&>(*probe));
  }
  return std::make_shared<AbortableDevice>(resolved, std::move(registry));
}

}  // namespace strata::distribute
