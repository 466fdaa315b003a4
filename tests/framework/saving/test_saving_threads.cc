// HDF5 is not thread-safe: every call into it runs under one process-wide lock, so threads may
// save and load (different files) at the same time.
#include <gtest/gtest.h>

#include <thread>

#include <strata/strata.h>

#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

TEST(SavingThreads, ConcurrentSavesAndLoads) {
  const auto dir = testing::h5::temp_dir("threads");
  constexpr int kThreads = 4;
  std::vector<std::shared_ptr<Sequential>> saved, loaded;
  for (int t = 0; t < kThreads; ++t) {
    for (auto* list : {&saved, &loaded}) {
      list->push_back(std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
          std::make_shared<Dense>(16), std::make_shared<BatchNormalization>()}));
      list->back()->build({-1, 8});
    }
  }
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < 10; ++i) {
          const std::string path = (dir / ("t" + std::to_string(t) + (i % 2 ? ".weights.h5" : ".h5"))).string();
          saved[size_t(t)]->save_weights(path);
          loaded[size_t(t)]->load_weights(path);
        }
      } catch (const std::exception& e) {
        errors[size_t(t)] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[size_t(t)], "") << "thread " << t;
    const auto a = saved[size_t(t)]->weights(), b = loaded[size_t(t)]->weights();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i]->read_value().to_vector<float>(), b[i]->read_value().to_vector<float>());
    }
  }
}

}  // namespace
}  // namespace strata
