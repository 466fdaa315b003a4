#include "framework/mixed_precision/autocast.h"

namespace strata::mixed_precision {
namespace {
// Per thread: the replicas of a distribution strategy call layers on threads of their own.
thread_local std::optional<DType> current_dtype;
}  // namespace

std::optional<DType> autocast_dtype() { return current_dtype; }

AutocastScope::AutocastScope(std::optional<DType> dtype) : previous_(current_dtype) {
  current_dtype = dtype;
}

AutocastScope::~AutocastScope() { current_dtype = previous_; }

}  // namespace strata::mixed_precision
