#include "distribute/cluster/coordination/coordination_task.h"

namespace strata::distribute {

std::string CoordinationTask::name() const {
  std::string name = job + " " + std::to_string(index);
  if (!address.empty()) name += " (" + address + ")";
  return name;
}

}  // namespace strata::distribute
