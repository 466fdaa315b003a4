// "localhost" in a cluster address always means this machine's loopback address (RFC 6761
// section 6.3), whatever /etc/hosts says: minimal roots (debootstrap) and some containers have
// no /etc/hosts, where getaddrinfo and gRPC's resolver fail on the name and a tutorial's
// TF_CONFIG ("localhost:20000") would leave every task waiting for a service it cannot find.
#pragma once

#include <string>

namespace strata::distribute {

// "localhost", "LocalHost" or "x.localhost" -> "127.0.0.1"; any other host unchanged.
std::string loopback_if_localhost(const std::string& host);

// "localhost:2222" -> "127.0.0.1:2222"; any other "host:port" unchanged.
std::string dialable_address(const std::string& host_port);

}  // namespace strata::distribute
