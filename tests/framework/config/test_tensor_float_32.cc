#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <strata/strata.h>

namespace strata {
namespace {

// Restores the process-wide setting whatever the test does.
class RestoreTf32 {
 public:
  RestoreTf32() : saved_(config::tensor_float_32_execution_enabled()) {}
  ~RestoreTf32() { config::enable_tensor_float_32_execution(saved_); }

 private:
  bool saved_;
};

TEST(TensorFloat32Config, EnabledByDefaultAsTensorFlow) {
  // Nothing in this process has changed it yet, or has put it back (every GPU test restores it).
  EXPECT_TRUE(config::tensor_float_32_execution_enabled());
}

TEST(TensorFloat32Config, DisableAndEnable) {
  RestoreTf32 restore;
  config::enable_tensor_float_32_execution(false);
  EXPECT_FALSE(config::tensor_float_32_execution_enabled());
  config::enable_tensor_float_32_execution(false);  // idempotent
  EXPECT_FALSE(config::tensor_float_32_execution_enabled());
  config::enable_tensor_float_32_execution(true);
  EXPECT_TRUE(config::tensor_float_32_execution_enabled());
}

TEST(TensorFloat32Config, ProcessWideAcrossThreads) {
  RestoreTf32 restore;
  config::enable_tensor_float_32_execution(false);
  std::atomic<int> seen_disabled{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      if (!config::tensor_float_32_execution_enabled()) ++seen_disabled;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(seen_disabled.load(), 4);
}

TEST(TensorFloat32Config, CpuResultsDoNotDependOnIt) {
  // TF32 only concerns GPU tensor cores: CPU float32 matmuls are exact float32 either way.
  RestoreTf32 restore;
  const Tensor a = random_normal({16, 24}, 0, 1, float32, 1);
  const Tensor b = random_normal({24, 8}, 0, 1, float32, 2);
  config::enable_tensor_float_32_execution(true);
  const std::vector<float> with = matmul(a, b).to_vector<float>();
  config::enable_tensor_float_32_execution(false);
  const std::vector<float> without = matmul(a, b).to_vector<float>();
  EXPECT_EQ(with, without);
}

}  // namespace
}  // namespace strata
