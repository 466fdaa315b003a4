// Whether the test binary runs under AddressSanitizer, for tests of what happens when memory
// runs out: under ASan an allocation the system refuses aborts the process (operator new always;
// malloc unless ASAN_OPTIONS has allocator_may_return_null=1) instead of failing softly.
#pragma once

#include <cstdlib>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define STRATA_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_TEST_UNDER_ASAN 1
#endif
#endif

namespace strata::testing {

constexpr bool under_address_sanitizer() {
#ifdef STRATA_TEST_UNDER_ASAN
  return true;
#else
  return false;
#endif
}

// True when a refused malloc returns nullptr (as it does without ASan).
inline bool malloc_failure_returns_null() {
  if (!under_address_sanitizer()) return true;
  const char* options = std::getenv("ASAN_OPTIONS");
  return options != nullptr &&
         std::string(options).find("allocator_may_return_null=1") != std::string::npos;
}

}  // namespace strata::testing
