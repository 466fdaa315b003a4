// "localhost" in a cluster address is the loopback address even without /etc/hosts, and every
// spelling of the loopback host is one host when cluster addresses are compared.
#include <gtest/gtest.h>

#include "distribute/cluster/loopback_address.h"

namespace strata::testing {
namespace {

using distribute::comparable_host;
using distribute::dialable_address;
using distribute::is_loopback_host;
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

// Two cluster addresses are compared without DNS: every loopback spelling is one host.
TEST(LoopbackAddress, EveryLoopbackSpellingIsOneHost) {
  for (const char* host : {"localhost", "LOCALHOST", "localhost.", "w0.localhost", "127.0.0.1",
                           "127.0.0.1.", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1",
                           "::FFFF:7f00:1"}) {
    SCOPED_TRACE(host);
    EXPECT_TRUE(is_loopback_host(host));
    EXPECT_EQ(comparable_host(host), "localhost");
  }
  for (const char* host : {"127.0.0.2", "10.0.0.1", "::2", "host0", "localhost.example.com"}) {
    SCOPED_TRACE(host);
    EXPECT_FALSE(is_loopback_host(host));
  }
}

TEST(LoopbackAddress, OtherHostsCompareInACanonicalForm) {
  EXPECT_EQ(comparable_host("Host0.Example.COM."), "host0.example.com");
  EXPECT_EQ(comparable_host("2001:DB8:0:0::7"), "2001:db8::7");
  EXPECT_EQ(comparable_host("10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(comparable_host("fe80::1%eth0"), "fe80::1%eth0");
  // Canonical forms are fixed points: comparing twice changes nothing.
  for (const char* host : {"Host0.", "2001:DB8::7", "127.0.0.1.", "::ffff:10.0.0.1", "."}) {
    SCOPED_TRACE(host);
    EXPECT_EQ(comparable_host(comparable_host(host)), comparable_host(host));
  }
}

}  // namespace
}  // namespace strata::testing
