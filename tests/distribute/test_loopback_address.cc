// "localhost" in a cluster address is the loopback address even without /etc/hosts.
#include <gtest/gtest.h>

#include "distribute/loopback_address.h"

namespace strata::testing {
namespace {

using distribute::dialable_address;
using distribute::loopback_if_localhost;

TEST(LoopbackAddress, LocalhostNamesAreTheLoopbackAddress) {
  EXPECT_EQ(loopback_if_localhost("localhost"), "127.0.0.1");
  EXPECT_EQ(loopback_if_localhost("LocalHost"), "127.0.0.1");
  EXPECT_EQ(loopback_if_localhost("localhost."), "127.0.0.1");
  EXPECT_EQ(loopback_if_localhost("worker-0.localhost"), "127.0.0.1");
  EXPECT_EQ(dialable_address("localhost:20000"), "127.0.0.1:20000");
}

TEST(LoopbackAddress, OtherHostsAreLeftAlone) {
  EXPECT_EQ(loopback_if_localhost("host0"), "host0");
  EXPECT_EQ(loopback_if_localhost("notlocalhost"), "notlocalhost");
  EXPECT_EQ(loopback_if_localhost("localhost.example.com"), "localhost.example.com");
  EXPECT_EQ(loopback_if_localhost("10.0.0.3"), "10.0.0.3");
  EXPECT_EQ(dialable_address("host0:2222"), "host0:2222");
  EXPECT_EQ(dialable_address("[::1]:2222"), "[::1]:2222");
  EXPECT_EQ(dialable_address("localhost"), "localhost");  // no port: not an address to dial
}

}  // namespace
}  // namespace strata::testing
