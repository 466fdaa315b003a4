#include "distribute/loopback_address.h"

#include <algorithm>
#include <cctype>

namespace strata::distribute {

namespace {

bool is_localhost(std::string host) {
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (!host.empty() && host.back() == '.') host.pop_back();  // the absolute form "localhost."
  const std::string name = "localhost";
  if (host == name) return true;
  return host.size() > name.size() + 1 &&
         host.compare(host.size() - name.size() - 1, std::string::npos, "." + name) == 0;
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

}  // namespace strata::distribute
