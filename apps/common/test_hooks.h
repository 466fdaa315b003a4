// Fault injection for the apps' tests, and nothing else: a test sets STRATA_TEST_KILL_AT=<point>
// in a child's environment to have the app SIGKILL itself at that point (a power cut at a chosen
// moment, without a race against a timer). Unset, each point costs one getenv.
#pragma once

#include <signal.h>

#include <cstdlib>
#include <cstring>

namespace apps {

inline void kill_point(const char* point) {
  const char* at = std::getenv("STRATA_TEST_KILL_AT");
  if (at != nullptr && std::strcmp(at, point) == 0) ::raise(SIGKILL);
}

}  // namespace apps
