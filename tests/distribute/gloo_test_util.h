// Shared by the Gloo rendezvous tests: a rank that published its ends of the pairs and died
// before dialing.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gloo/transport/tcp/address.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "distribute/cluster/coordination/key_value_store.h"
#include "distribute/collectives/gloo/gloo_store.h"

namespace strata::testing {

// Publishes, under `prefix` in `store`, rank `from`'s end of its pair with each rank of `to`
// as a GlooCommunicator would, but at 127.255.255.254:65535: an address larger than any rank
// gets on loopback (rank_listen_host.h's 127.1.x.y included), so the other ends listen for a
// dial that never comes (Gloo's rule: the larger address dials).
inline void publish_ends_that_never_dial(distribute::KeyValueStore& store,
                                         const std::string& prefix, int from,
                                         const std::vector<int>& to) {
  sockaddr_storage ss{};
  auto* in = reinterpret_cast<sockaddr_in*>(&ss);
  in->sin_family = AF_INET;
  in->sin_port = htons(65535);
  in->sin_addr.s_addr = htonl(0x7ffffffe);
  const std::vector<char> address = gloo::transport::tcp::Address(ss).bytes();
  std::vector<std::pair<std::string, std::vector<char>>> entries;
  for (int peer : to) {
    entries.emplace_back("pair/" + std::to_string(from) + "/" + std::to_string(peer), address);
  }
  distribute::GlooStore(store, prefix, std::chrono::milliseconds(10000)).set_many(entries);
}

}  // namespace strata::testing
