#include "distribute/cluster/loopback_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace strata::distribute {

namespace {

// Lower case, without the final dot of an absolute name ("Host." -> "host").
std::string folded_name(std::string host) {
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (!host.empty() && host.back() == '.') host.pop_back();
  return host;
}

bool is_localhost(const std::string& host) {
  const std::string folded = folded_name(host);
  const std::string name = "localhost";
  if (folded == name) return true;
  return folded.size() > name.size() + 1 &&
         folded.compare(folded.size() - name.size() - 1, std::string::npos, "." + name) == 0;
}

// The canonical text of an IPv4 or IPv6 address, or "" when `host` is not one. A zone
// ("fe80::1%eth0") stays as written after the address.
std::string canonical_ip(const std::string& host) {
  char text[INET6_ADDRSTRLEN] = {};
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return inet_ntop(AF_INET, &v4, text, sizeof text) ? text : "";
  }
  const size_t percent = host.find('%');
  const std::string address = host.substr(0, percent);
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) != 1) return "";
  if (!inet_ntop(AF_INET6, &v6, text, sizeof text)) return "";
  return std::string(text) + (percent == std::string::npos ? "" : host.substr(percent));
}

}  // namespace

std::string loopback_if_localhost(const std::string& host) {
  return is_localhost(host) ? "127.0.0.1" : host;
}

std::string dialable_address(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  if (colon == std::string::npos || host_port.find(']') != std::string::npos) return host_port;
  const std::string host = host_port.substr(0, colon);
  return is_localhost(host) ? "127.0.0.1" + host_port.substr(colon) : host_port;
}

bool is_loopback_host(const std::string& host) {
  const std::string name = folded_name(host);  // also "127.0.0.1." and "LOCALHOST"
  if (is_localhost(name)) return true;
  const std::string ip = canonical_ip(name);
  return ip == "127.0.0.1" || ip == "::1" || ip == "::ffff:127.0.0.1";
}

std::string comparable_host(const std::string& host) {
  const std::string name = folded_name(host);
  if (is_loopback_host(name)) return "localhost";
  const std::string ip = canonical_ip(name);
  return ip.empty() ? name : ip;
}

}  // namespace strata::distribute
