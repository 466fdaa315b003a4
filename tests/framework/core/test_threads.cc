#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <strata/strata.h>

namespace strata {
namespace {

TEST(Threads, SetAndGet) {
  set_num_threads(1);
  EXPECT_EQ(get_num_threads(), 1);
  set_num_threads(2);
  EXPECT_EQ(get_num_threads(), 2);
  EXPECT_THROW(set_num_threads(0), ValueError);
}

// Run by the ctest entries threads.from_environment* (tests/CMakeLists.txt), which set
// STRATA_NUM_THREADS before the process starts.
TEST(Threads, FromEnvironment) {
  const char* env = std::getenv("STRATA_NUM_THREADS");
  if (env == nullptr) GTEST_SKIP() << "needs STRATA_NUM_THREADS (set by its ctest entry)";
  const std::string value = env;
  if (value == "not-a-number") {
    try {
      get_num_threads();
      FAIL() << "expected ValueError";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("STRATA_NUM_THREADS"), std::string::npos);
    }
  } else {
    EXPECT_EQ(get_num_threads(), std::atoi(env));
    EXPECT_EQ(reduce_sum(ones({100000})).item<float>(), 100000.0f);
  }
}

}  // namespace
}  // namespace strata
