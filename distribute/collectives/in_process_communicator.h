// InProcessGroup: a Communicator for replicas that are threads of one process (logical CPU
// devices, tests). Ranks meet per collective: the n-th collective each rank issues is matched
// with every other rank's n-th; the last rank to arrive computes the result once, in rank order,
// so every rank gets bit-identical values; the others wait (up to the group's timeout, then a
// CollectiveError names the ranks that never came).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "distribute/collectives/communicator.h"

namespace strata::distribute {

class InProcessGroup final : public CommunicatorGroup {
 public:
  explicit InProcessGroup(int world_size,
                          std::chrono::milliseconds timeout = std::chrono::minutes(5));
  ~InProcessGroup();
  InProcessGroup(const InProcessGroup&) = delete;
  InProcessGroup& operator=(const InProcessGroup&) = delete;

  int world_size() const override;
  void abort(const std::string& reason) override;
  std::shared_ptr<Communicator> communicator(int rank) override;

  struct State;  // shared by the group and its communicators (which may outlive it)

 private:
  std::shared_ptr<State> state_;
  std::vector<std::shared_ptr<Communicator>> communicators_;
};

}  // namespace strata::distribute
