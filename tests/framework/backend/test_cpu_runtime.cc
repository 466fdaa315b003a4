// cpu::onednn_version(): what strata-info prints for the CPU backend's library.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include <strata/strata.h>

namespace strata {
namespace {

TEST(CpuRuntime, OnednnVersionIsTheLoadedLibrarysSemver) {
  const std::string v = cpu::onednn_version();
  std::smatch m;
  ASSERT_TRUE(std::regex_match(v, m, std::regex(R"((\d+)\.(\d+)\.(\d+)( \(git [0-9a-f]{1,7}\))?)")))
      << "got '" << v << "'";
  // A real release (oneDNN 1.0 was its first under this name), not zeros from a failed query.
  EXPECT_GE(std::stoi(m[1].str()), 1) << v;
}

}  // namespace
}  // namespace strata
