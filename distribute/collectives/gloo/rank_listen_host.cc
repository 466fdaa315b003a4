#include "distribute/collectives/gloo/rank_listen_host.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "distribute/cluster/loopback_address.h"

namespace strata::distribute {
namespace {

// Whether a TCP socket can bind `ip` (an IPv4 address) on a port the kernel picks.
bool can_bind(const std::string& ip) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  if (inet_pton(AF_INET, ip.c_str(), &address.sin_addr) != 1) return false;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const bool bound = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return bound;
}

}  // namespace

std::string rank_listen_host(const std::string& host, int rank) {
#ifdef __linux__
  const std::string ip = loopback_if_localhost(host);
  if (rank < 0 || rank >= 250 * 254 || ip.rfind("127.", 0) != 0 || !is_loopback_host(host)) {
    return host;
  }
  const std::string own = "127.1." + std::to_string(1 + rank / 250) + "." +
                          std::to_string(1 + rank % 250);
  return can_bind(own) ? own : host;
#else
  (void)rank;
  return host;
#endif
}

}  // namespace strata::distribute
