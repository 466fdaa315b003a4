// The variable-creator stack (TensorFlow's variable_creator_scope). create_variable() calls the
// innermost creator, which may build the variable itself or defer to the next one down; the
// bottom of the stack makes a plain local Variable. Distribution strategies push a creator in
// their scope() to make mirrored or sharded variables; tests push one to see every variable.
#pragma once

#include <functional>
#include <memory>

#include "framework/variables/variable.h"

namespace strata {

using NextCreator = std::function<VariablePtr(const VariableSpec&)>;
using VariableCreator = std::function<VariablePtr(const VariableSpec&, const NextCreator& next)>;

// Pushes `creator` on this thread's stack for the scope's lifetime. Scopes must be destroyed in
// reverse order of creation (RAII guarantees it).
class VariableCreatorScope {
 public:
  explicit VariableCreatorScope(VariableCreator creator);
  ~VariableCreatorScope();
  VariableCreatorScope(const VariableCreatorScope&) = delete;
  VariableCreatorScope& operator=(const VariableCreatorScope&) = delete;

 private:
  size_t depth_;
};

// The one way to make a variable: layers' add_weight, optimizer slots and metrics all call it.
VariablePtr create_variable(const VariableSpec& spec);

}  // namespace strata
