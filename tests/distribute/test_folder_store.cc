// FolderStore: the file-backed KeyValueStore the cross-process Gloo test and the all-reduce
// benchmark meet through.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "distribute/cluster/coordination/folder_store.h"

namespace strata::distribute {
namespace {

class FolderStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("strata_folder_store_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(FolderStoreTest, DistinctKeysNeverShareAFile) {
  FolderStore store(dir_);
  store.set("gloo/1", "slash");
  store.set("gloo_1", "underscore");
  store.set("gloo%2F1", "escaped-looking");
  EXPECT_EQ(store.try_get("gloo/1"), "slash");
  EXPECT_EQ(store.try_get("gloo_1"), "underscore");
  EXPECT_EQ(store.try_get("gloo%2F1"), "escaped-looking");
  store.set("bytes", std::string("\0\x01\xff", 3));
  EXPECT_EQ(FolderStore(dir_).get("bytes", std::chrono::milliseconds(10)), std::string("\0\x01\xff", 3));
  store.erase("gloo/1");
  EXPECT_FALSE(store.try_get("gloo/1").has_value());
}

TEST_F(FolderStoreTest, ConcurrentAddsAllCount) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      FolderStore store(dir_);
      for (int i = 0; i < 25; ++i) store.add("count", 1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(FolderStore(dir_).try_get("count"), "100");
}

TEST_F(FolderStoreTest, AMissingKeyIsAnErrorNamingIt) {
  FolderStore store(dir_);
  try {
    store.get("never/set", std::chrono::milliseconds(20));
    FAIL() << "expected a CoordinationError";
  } catch (const CoordinationError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'never/set' was not set within 20 ms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata::distribute
