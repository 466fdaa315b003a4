// rank_listen_host: on loopback each Gloo rank listens on an address of its own (Linux routes
// all of 127.0.0.0/8 to lo), so a job of many ranks on one machine does not crowd one address's
// ports; any other host is used as given.
#include <gtest/gtest.h>

#include "distribute/collectives/gloo/rank_listen_host.h"

namespace strata::distribute {
namespace {

TEST(RankListenHost, LoopbackRanksGetAddressesOfTheirOwnOtherHostsStayAsGiven) {
#ifdef __linux__
  const std::string first = rank_listen_host("127.0.0.1", 0);
  if (first == "127.0.0.1") GTEST_SKIP() << "this machine binds only 127.0.0.1 (a sandbox)";
  EXPECT_EQ(first, "127.1.1.1");
  EXPECT_EQ(rank_listen_host("localhost", 1), "127.1.1.2");
  EXPECT_EQ(rank_listen_host("127.0.0.1", 300), "127.1.2.51");
  EXPECT_EQ(rank_listen_host("127.0.0.1", 250 * 254 - 1), "127.1.254.250");
#endif
  EXPECT_EQ(rank_listen_host("127.0.0.1", 250 * 254), "127.0.0.1");  // past the spread
  EXPECT_EQ(rank_listen_host("10.0.0.5", 3), "10.0.0.5");
  EXPECT_EQ(rank_listen_host("::1", 3), "::1");
  EXPECT_EQ(rank_listen_host("worker-0.svc", 3), "worker-0.svc");
}

}  // namespace
}  // namespace strata::distribute
