// Where a rank's Gloo pairs listen. Gloo (Debian's build) opens one listening socket per pair,
// bound to port 0 with SO_REUSEADDR, and Linux puts such binds in the lower half of the
// ephemeral ports: with a whole job on one machine's loopback address (N(N-1) sockets: 16,256
// at 128 ranks) that half fills up and each bind searches it. Measured with a 20-line C
// program, 128 processes x 127 such binds: median 2.9 s a process on 127.0.0.1, 1 ms when each
// process binds its own loopback address. Linux routes all of 127.0.0.0/8 to the loopback
// interface, and peers learn every pair's address from the store (never from the cluster
// spec), so on loopback rank r listens on an address of its own.
#pragma once

#include <string>

namespace strata::distribute {

// `host` unchanged unless it is an IPv4 loopback host ("127.0.0.1", "localhost") on Linux: then
// "127.1.<1 + r / 250>.<1 + r % 250>" for rank r (up to 63,500 ranks), if this machine lets a
// socket bind it (some sandboxes have only 127.0.0.1: then `host`).
std::string rank_listen_host(const std::string& host, int rank);

}  // namespace strata::distribute
