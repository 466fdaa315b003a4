// CoordinationTask: one task of a multi-process job as the coordination service
// (coordination_service.h) and its clients (coordination_client.h) know it.
#pragma once

#include <string>

namespace strata::distribute {

struct CoordinationTask {
  std::string job;      // "chief", "worker", ...
  int index = 0;
  std::string address;  // "host:port" from the cluster spec
  // How every error names the task: "worker 2 (localhost:20002)", "worker 2" without address.
  std::string name() const;
};

}  // namespace strata::distribute
