#pragma once
// A Gloo TCP device whose collectives can all be failed at once, from any thread.
//
// Why: Gloo's own way to fail a context's pending ops (tcp::Context::signalException, what
// GlooCommunicator::abort calls) reaches the ops queued on each connection, but misses one
// case: a send whose write hit a connection the peer had already closed (EPIPE/ECONNRESET).
// Gloo's asynchronous write path then parks the op in the connection's transmit queue without
// an error, and signalException wakes only the bound buffers of that queue, not the unbound
// ones Gloo's collectives use. The collective then waits for its send until Gloo's timeout
// (minutes), whatever abort() does: a survivor of a killed worker hung there. This device
// keeps a list of the live unbound buffers of its contexts, so abort can fail each of them.
//
// Internal to distribute/collectives/gloo (it includes Gloo's headers).

#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/device.h>

#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

namespace strata::distribute {

class TrackedUnboundBuffer;

// The live unbound buffers of one device's contexts; fail_all() fails every one of them, and
// every buffer created afterwards, with `error`.
class UnboundBufferRegistry {
 public:
  void fail_all(std::exception_ptr error);

 private:
  friend class TrackedUnboundBuffer;
  void add(TrackedUnboundBuffer* buffer);
  void remove(TrackedUnboundBuffer* buffer);

  std::mutex mutex_;
  std::unordered_set<TrackedUnboundBuffer*> live_;
  std::exception_ptr error_;
};

// Gloo's tcp::CreateDevice (the same address lookup), with buffers listed in `registry`.
std::shared_ptr<gloo::transport::Device> create_abortable_tcp_device(
    const gloo::transport::tcp::attr& attr, std::shared_ptr<UnboundBufferRegistry> registry);

}  // namespace strata::distribute
