// Runs a reader in a child process whose address space is capped a little above what it
// already uses, so a reader that allocates what a file merely declares fails there as it would
// on a machine (or container) with little memory: the child must report a strata::Error, not
// die of a std::bad_alloc escaping to std::terminate.
#pragma once

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

#include "support/sanitizers.h"

namespace strata::testing {

// Caps this process's address space at its current size plus `headroom` bytes.
inline void limit_address_space(uint64_t headroom) {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  const uint64_t cap = pages * uint64_t(sysconf(_SC_PAGESIZE)) + headroom;
  const rlimit limit{cap, cap};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(5);
}

// Runs `f` in a child limited to `headroom` more bytes of address space; passes when it throws
// E whose message contains every one of `parts` (anything else, a crash included, fails).
template <typename E, typename F>
void expect_error_under_memory_limit(F&& f, uint64_t headroom,
                                     std::initializer_list<std::string_view> parts) {
  // AddressSanitizer reserves terabytes of address space for its shadow memory.
  if (under_address_sanitizer()) GTEST_SKIP() << "an address-space limit breaks AddressSanitizer";
  // The child re-executes this test binary: the parent's threads (OpenMP's) don't come along.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        limit_address_space(headroom);
        try {
          f();
        } catch (const E& e) {
          const std::string what = e.what();
          std::fprintf(stderr, "threw: %s\n", what.c_str());
          for (std::string_view p : parts) {
            if (what.find(p) == std::string::npos) {
              std::fprintf(stderr, "the message lacks: %.*s\n", int(p.size()), p.data());
              std::_Exit(3);
            }
          }
          std::_Exit(0);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "wrong exception: %s\n", e.what());
          std::_Exit(2);
        }
        std::fprintf(stderr, "no exception\n");
        std::_Exit(4);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace strata::testing
