// LazyLibrary, the loader behind the CUDA backend's cuBLASLt, cuDNN and NCCL: a missing library
// or function is a DeviceError that names it and the fix (never a crash), and a library is
// opened once however many threads ask at the same time. Tried on libm (always present) and on
// a library that does not exist, so these run in every build, with or without CUDA.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "framework/backend/lazy_library.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

LazyLibrarySpec missing_spec() {
  return {"FakeDNN", "libstrata-no-such-library.so.7", {"/nonexistent/strata-test-dir"}, "7.1.0",
          "fake convolutions", "install FakeDNN 7 (pip: fake-dnn)"};
}

LazyLibrarySpec libm_spec() {
  return {"libm", "libm.so.6", {}, "2.36", "testing", "install libc6"};
}

TEST(LazyLibrary, MissingLibraryIsADeviceErrorNamingItAndTheFix) {
  LazyLibrary library(missing_spec());
  EXPECT_FALSE(library.available());  // asks without throwing
  for (int attempt = 0; attempt < 2; ++attempt) {  // the same answer every time
    testing::expect_error<DeviceError>(
        [&] { library.handle(); },
        {"FakeDNN (libstrata-no-such-library.so.7) could not be loaded",
         "fake convolutions",
         // What was searched, with the loader's own reasons:
         "libstrata-no-such-library.so.7: cannot open shared object file",
         "/nonexistent/strata-test-dir/libstrata-no-such-library.so.7",
         // ... and the fixes:
         "install FakeDNN 7 (pip: fake-dnn)", "LD_LIBRARY_PATH", "built with FakeDNN 7.1.0"});
  }
  testing::expect_error<DeviceError>([&] { library.symbol("fakeCreate"); },
                                     {"FakeDNN (libstrata-no-such-library.so.7)"});
}

TEST(LazyLibrary, MissingFunctionIsADeviceErrorNamingItAndTheLibrary) {
  LazyLibrary library(libm_spec());
  ASSERT_TRUE(library.available());
  testing::expect_error<DeviceError>(
      [&] { library.symbol("strata_no_such_function"); },
      {"libm (", "libm.so.6", "has no function strata_no_such_function",
       "undefined symbol: strata_no_such_function", "older than the libm 2.36",
       "install libc6, 2.36 or newer"});
  // The library itself still works.
  const auto cosine = library.function<double (*)(double)>("cos");
  EXPECT_EQ(cosine(0.0), 1.0);
}

// Counts how often the opener runs; slow, to keep every thread waiting on the first load.
std::atomic<int> opens{0};
void* slow_counting_open(const char* file, std::string* error) {
  opens.fetch_add(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) *error = dlerror();
  return handle;
}
void* failing_open(const char* file, std::string* error) {
  opens.fetch_add(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  *error = std::string(file) + ": refused by the test";
  return nullptr;
}

// Starts `threads` threads that each call f() at the same moment, and joins them.
template <typename F>
void at_once(int threads, F f) {
  std::latch start(threads);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      start.arrive_and_wait();
      f(i);
    });
  }
  for (std::thread& t : pool) t.join();
}

TEST(LazyLibrary, LoadsOnceWhenManyThreadsAskAtOnce) {
  opens = 0;
  LazyLibrary library(libm_spec(), &slow_counting_open);
  constexpr int kThreads = 8;
  std::vector<void*> handles(kThreads, nullptr);
  std::vector<void*> functions(kThreads, nullptr);
  at_once(kThreads, [&](int i) {
    handles[size_t(i)] = library.handle();
    functions[size_t(i)] = library.symbol("sqrt");
  });
  EXPECT_EQ(opens.load(), 1);
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_NE(handles[size_t(i)], nullptr);
    EXPECT_EQ(handles[size_t(i)], handles[0]);
    EXPECT_EQ(functions[size_t(i)], functions[0]);
  }
  library.handle();
  EXPECT_EQ(opens.load(), 1);
}

TEST(LazyLibrary, AFailedLoadIsRememberedNotRetried) {
  opens = 0;
  LazyLibrarySpec spec = missing_spec();
  spec.search_dirs = {"/opt/a", "/opt/b"};
  LazyLibrary library(spec, &failing_open);
  std::atomic<int> errors{0};
  at_once(6, [&](int) {
    try {
      library.handle();
    } catch (const DeviceError& e) {
      const std::string what = e.what();
      if (what.find("libstrata-no-such-library.so.7: refused by the test; "
                    "/opt/a/libstrata-no-such-library.so.7: refused by the test; "
                    "/opt/b/libstrata-no-such-library.so.7: refused by the test") !=
          std::string::npos) {
        errors.fetch_add(1);
      }
    }
  });
  EXPECT_EQ(errors.load(), 6);
  EXPECT_EQ(opens.load(), 3);  // the soname, then each folder: once
  EXPECT_FALSE(library.available());
  EXPECT_EQ(opens.load(), 3);
}

TEST(LazyLibrary, ErrorTextsFallBackWhenTheLibraryIsOutOfReach) {
  LazyLibrary missing(missing_spec());
  // What throw_cudnn_error does with cudnnGetErrorString: a missing library leaves the fallback,
  // not a second error in place of the first.
  const auto error_string = [&]() -> const char* {
    missing.symbol("fakeGetErrorString");
    return "unreachable";
  };
  EXPECT_EQ(library_text_or(error_string, "FakeDNN status 3"), "FakeDNN status 3");
  EXPECT_EQ(library_text_or([]() -> const char* { return nullptr; }, "none"), "none");
  EXPECT_EQ(library_text_or([]() -> const char* { return "BAD_PARAM"; }, "none"), "BAD_PARAM");
}

}  // namespace
}  // namespace strata
