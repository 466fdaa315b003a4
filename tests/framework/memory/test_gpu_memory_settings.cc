// The per-GPU memory settings behind config::set_memory_growth / set_memory_limit: defaults from
// the environment, and the freeze when a GPU's allocator is created. Device-agnostic: GPU
// indices here name no real GPU.
#include "framework/memory/gpu_memory_settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "framework/core/error.h"

namespace strata {
namespace {

TEST(GpuMemorySettings, ParsesAllowGrowth) {
  EXPECT_EQ(gpu::parse_allow_growth("X", nullptr), std::nullopt);
  EXPECT_EQ(gpu::parse_allow_growth("X", "true"), true);
  EXPECT_EQ(gpu::parse_allow_growth("X", "TRUE"), true);
  EXPECT_EQ(gpu::parse_allow_growth("X", "False"), false);
  for (const char* bad : {"", "1", "yes", "true "}) {
    try {
      gpu::parse_allow_growth("TF_FORCE_GPU_ALLOW_GROWTH", bad);
      ADD_FAILURE() << "expected ValueError for '" << bad << "'";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("TF_FORCE_GPU_ALLOW_GROWTH='") + bad + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

// Run by ctest with STRATA_GPU_ALLOW_GROWTH / TF_FORCE_GPU_ALLOW_GROWTH set (tests/CMakeLists.txt);
// without them the default is growth on.
TEST(GpuMemorySettings, DefaultGrowthFromEnvironment) {
  const char* strata_env = std::getenv("STRATA_GPU_ALLOW_GROWTH");
  const char* tf_env = std::getenv("TF_FORCE_GPU_ALLOW_GROWTH");
  const std::string value = strata_env ? strata_env : tf_env ? tf_env : "";
  if (value == "maybe") {
    try {
      gpu::default_memory_growth();
      FAIL() << "expected ValueError";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(strata_env ? "STRATA_GPU_ALLOW_GROWTH='maybe'"
                                                      : "TF_FORCE_GPU_ALLOW_GROWTH='maybe'"),
                std::string::npos)
          << e.what();
    }
    return;
  }
  const bool expected = value.empty() || value == "true";
  EXPECT_EQ(gpu::default_memory_growth(), expected);
  EXPECT_EQ(gpu::memory_settings(1001).memory_growth, expected);
}

TEST(GpuMemorySettings, FreezeWhenTheAllocatorIsCreated) {
  constexpr int kIndex = 1000;  // no real GPU: nothing else touches its settings
  ASSERT_FALSE(gpu::memory_settings_frozen(kIndex));
  EXPECT_EQ(gpu::memory_settings(kIndex).memory_limit, 0u);
  EXPECT_EQ(gpu::memory_settings(kIndex).memory_growth, gpu::default_memory_growth());
  gpu::set_memory_growth(kIndex, false, "config::set_memory_growth");
  gpu::set_memory_limit(kIndex, size_t(256) << 20, "config::set_memory_limit");
  EXPECT_FALSE(gpu::memory_settings(kIndex).memory_growth);

  const gpu::MemorySettings frozen = gpu::freeze_memory_settings(kIndex);
  EXPECT_FALSE(frozen.memory_growth);
  EXPECT_EQ(frozen.memory_limit, size_t(256) << 20);
  EXPECT_TRUE(gpu::memory_settings_frozen(kIndex));
  try {
    gpu::set_memory_growth(kIndex, true, "config::set_memory_growth");
    FAIL() << "expected StateError";
  } catch (const StateError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("config::set_memory_growth(/gpu:1000)"), std::string::npos) << message;
    EXPECT_NE(message.find("Physical devices cannot be modified after being initialized"),
              std::string::npos)
        << message;
  }
  EXPECT_THROW(gpu::set_memory_limit(kIndex, 1 << 20, "config::set_memory_limit"), StateError);
  // Unchanged, and freezing again gives the same.
  EXPECT_FALSE(gpu::memory_settings(kIndex).memory_growth);
  EXPECT_EQ(gpu::freeze_memory_settings(kIndex).memory_limit, size_t(256) << 20);
}

}  // namespace
}  // namespace strata
