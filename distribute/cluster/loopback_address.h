// "localhost" in a cluster address always means this machine's loopback address (RFC 6761
// section 6.3), whatever /etc/hosts says: minimal roots (debootstrap) and some containers have
// no /etc/hosts, where getaddrinfo and gRPC's resolver fail on the name and a tutorial's
// TF_CONFIG ("localhost:20000") would leave every task waiting for a service it cannot find.
//
// The same rule decides when two cluster addresses are one: "localhost:2222", "LOCALHOST:2222",
// "127.0.0.1:2222" and "[::1]:2222" all name this machine's loopback interface on port 2222 (a
// server bound to any of them, or to every interface, takes the port from the others), so two
// tasks given them would collide. No other name is resolved: a Kubernetes service name may not
// resolve until its pod starts, and TensorFlow does not resolve cluster addresses either.
#pragma once

#include <string>

namespace strata::distribute {

// "localhost", "LocalHost" or "x.localhost" -> "127.0.0.1"; any other host unchanged.
std::string loopback_if_localhost(const std::string& host);

// "localhost:2222" -> "127.0.0.1:2222"; any other "host:port" unchanged.
std::string dialable_address(const std::string& host_port);

// Whether `host` (an IPv6 address without its brackets) names the loopback interface: a
// localhost name (as above), 127.0.0.1, or ::1 in any of its spellings (also ::ffff:127.0.0.1).
bool is_loopback_host(const std::string& host);

// `host` as two cluster addresses are compared, without any DNS lookup: "localhost" for every
// loopback host (is_loopback_host), an IP address in its canonical text ("0:0::a" -> "::a"), a
// name in lower case without its final dot (DNS names ignore case).
std::string comparable_host(const std::string& host);

}  // namespace strata::distribute
