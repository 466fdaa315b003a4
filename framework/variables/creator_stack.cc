#include "framework/variables/creator_stack.h"

#include <vector>

namespace strata {
namespace {
thread_local std::vector<VariableCreator> t_creators;

VariablePtr create_from(size_t level, const VariableSpec& spec) {
  if (level == 0) return std::make_shared<Variable>(spec);
  const VariableCreator& creator = t_creators[level - 1];
  NextCreator next = [level](const VariableSpec& s) { return create_from(level - 1, s); };
  VariablePtr v = creator(spec, next);
  if (!v) throw ValueError("create_variable: a variable creator returned null for '" + spec.name + "'");
  return v;
}
}  // namespace

VariableCreatorScope::VariableCreatorScope(VariableCreator creator) : depth_(t_creators.size()) {
  if (!creator) throw ValueError("VariableCreatorScope: creator is empty");
  t_creators.push_back(std::move(creator));
}

VariableCreatorScope::~VariableCreatorScope() {
  // Remove exactly this scope's creator, even if scopes were (wrongly) destroyed out of order.
  if (depth_ < t_creators.size()) t_creators.erase(t_creators.begin() + std::ptrdiff_t(depth_));
}

VariablePtr create_variable(const VariableSpec& spec) {
  return create_from(t_creators.size(), spec);
}

}  // namespace strata
