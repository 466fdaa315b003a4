// ParameterServer: what a ps task serves over gRPC (parameter_server.proto's ParameterService):
// plain strata::Variables by id, which workers create, read whole or by rows, assign, update,
// and (an optimizer's step count) add to atomically. An update is applied with the same code as
// local training (Variable::apply_update with the variable's slots hosted here), so the math is
// the Optimizer's. Several workers may push at once (asynchronous training): each update holds
// its variable's and its slots' locks.
//
// Every request is validated before it reaches a kernel or an allocation (parameter_server.proto
// lists the refusals): sizes against ParameterServerOptions::max_message_bytes and the
// variable's real size, ranks, dtypes, ids, slots, indices, optimizer kinds and
// hyper-parameters, integer overflow. A malformed or hostile message is answered with a status
// naming the field; it never takes the ps down.
//
// gRPC stays behind the pointer: this header includes neither gRPC nor protobuf.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "distribute/parameter_server/parameter_server_options.h"

namespace strata::distribute {

// What the server did with one variable (for tests and benchmarks).
struct HostedVariableCounters {
  int64_t full_reads = 0;      // Read RPCs that returned the whole value
  int64_t rows_served = 0;     // rows returned by ReadRows
  int64_t dense_updates = 0;
  int64_t sparse_updates = 0;
  int64_t rows_updated = 0;    // rows carried by the sparse updates
  int64_t assigns = 0;
  int64_t fetch_adds = 0;      // FetchAdd RPCs (the optimizer's step claims)
};

class ParameterServer {
 public:
  // Serves on bind_address ("host:port", "[::]:port"; port 0 = a free port; "localhost" listens
  // on the loopback). CoordinationError naming the address and the fix when it cannot bind.
  static std::unique_ptr<ParameterServer> start(const std::string& bind_address,
                                                ParameterServerOptions options = {});
  // The port bound (the one chosen for port 0).
  int port() const;
  // Blocks until a client asks it to shut down (ParameterClient::shutdown: the job is over).
  void wait_for_shutdown();
  // How many variables it hosts.
  size_t num_variables() const;
  // The counters of variable `id`; CoordinationError when it hosts no such variable.
  HostedVariableCounters counters(const std::string& id) const;
  // Drops every hosted variable, as a restarted ps would have none (tests and the fuzzer start
  // each case from an empty ps without restarting the server).
  void clear_variables();
  // Stops serving (calls in flight get a second to finish); clients then fail with UNAVAILABLE.
  ~ParameterServer();

  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

 private:
  struct Impl;
  explicit ParameterServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::distribute
