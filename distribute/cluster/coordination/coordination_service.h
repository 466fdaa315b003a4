// CoordinationService: what the coordinator task (chief 0, else master 0, else worker 0) of a
// multi-process job serves over gRPC for every task's CoordinationClient (TensorFlow's
// coordination service): the key-value store the collectives meet through, barriers, heartbeats,
// the job's one fatal error, and the shutdown barrier. Every wait it parks ends: when its key is
// set or its barrier complete, at its timeout (naming the key or the missing tasks), when an
// error is posted, or when the service stops.
//
// gRPC stays behind the pointer: this header includes neither gRPC nor protobuf.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "distribute/cluster/coordination/coordination_options.h"
#include "distribute/cluster/coordination/coordination_task.h"
#include "distribute/errors.h"

namespace strata::distribute {

class CoordinationService {
 public:
  // Serves on bind_address ("host:port", "[::1]:port"; port 0 = a free port): the coordinator
  // task's own address, or its port on every interface when the job's bind host asks
  // (job_security.h), for `tasks`, every task that will register. Calls without the job's token
  // (when it has one) are refused. CoordinationError naming the address and the fix when it
  // cannot bind (the port is taken, or the host is not this machine's); ValueError naming the
  // file when the job's token or TLS files cannot be used.
  static std::unique_ptr<CoordinationService> start(const std::string& bind_address,
                                                    std::vector<CoordinationTask> tasks,
                                                    CoordinationOptions options = {});
  // The port bound (the one chosen for port 0).
  int port() const;
  // Stops serving: calls still waiting fail with UNAVAILABLE, "the coordination service is
  // stopping", which clients report as such.
  ~CoordinationService();

  CoordinationService(const CoordinationService&) = delete;
  CoordinationService& operator=(const CoordinationService&) = delete;

 private:
  struct Impl;
  explicit CoordinationService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Bytes of keys and values the coordination services of this process have taken in (set, add)
// and handed out (get, and the waits a set ends) since it started: what the collectives'
// rendezvous moves through the coordinator task. bench/scale_compare.sh prints it.
int64_t coordination_key_value_bytes();

}  // namespace strata::distribute
