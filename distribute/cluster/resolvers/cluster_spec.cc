#include "distribute/cluster/resolvers/cluster_spec.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cctype>
#include <cstdio>
#include <utility>

#include "distribute/cluster/loopback_address.h"
#include "framework/config/json.h"
#include "framework/core/error.h"

namespace strata::distribute {
namespace {

std::string task_name(const std::string& job, int index) {
  return job + " " + std::to_string(index);
}

bool is_ipv6_literal(const std::string& host) {
  const std::string address = host.substr(0, host.find('%'));  // without a zone ("%eth0")
  in6_addr ignored{};
  return !address.empty() && inet_pton(AF_INET6, address.c_str(), &ignored) == 1;
}

// "a space", "'/'", "the byte 0x07": the character as an error message names it.
std::string describe_char(char c) {
  if (c == ' ') return "a space";
  if (std::isprint(static_cast<unsigned char>(c))) return std::string("'") + c + "'";
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(c));
  return std::string("the byte ") + hex;
}

}  // namespace

std::optional<int> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoi(text);
}

HostPort parse_host_port(const std::string& address, const std::string& what) {
  const std::string fix = "; write it as host:port, e.g. \"localhost:20000\" or \"[::1]:20000\"";
  const std::string quoted = "\"" + address + "\"";
  const size_t scheme = address.find("://");
  if (scheme != std::string::npos) {
    throw ValueError(what + ": address " + quoted + " starts with a scheme (\"" +
                     address.substr(0, scheme + 3) + "\"); a cluster address is host:port "
                     "without one (TF_CONFIG's \"rpc_layer\" names the protocol)" + fix);
  }
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    throw ValueError(what + ": address " + quoted + " has no port" + fix);
  }
  HostPort hp;
  hp.host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  const bool bracketed = hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']';
  if (bracketed) {
    hp.host = hp.host.substr(1, hp.host.size() - 2);  // IPv6 in brackets
    if (!hp.host.empty() && !is_ipv6_literal(hp.host)) {
      throw ValueError(what + ": address " + quoted + " has \"[" + hp.host +
                       "]\" for a host, which is not an IPv6 address" + fix);
    }
  } else if (hp.host.find(':') != std::string::npos) {
    throw ValueError(what + ": address " + quoted +
                     " is ambiguous (an IPv6 host must be in brackets)" + fix);
  }
  if (hp.host.empty()) throw ValueError(what + ": address " + quoted + " has no host" + fix);
  if (!bracketed) {
    const size_t bad = hp.host.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_");
    if (bad != std::string::npos) {
      throw ValueError(what + ": address " + quoted + " has host \"" + hp.host +
                       "\", which holds " + describe_char(hp.host[bad]) +
                       "; a host is a name (letters, digits, '.', '-', '_') or an IP address, "
                       "without a scheme such as \"grpc://\" or a path" + fix);
    }
    // A name's labels are never empty ("a..b", ".a", "."): one final '.' only marks an absolute
    // name. Such a host names no machine, and two spellings of it would not compare as one.
    const std::string name =
        hp.host.back() == '.' ? hp.host.substr(0, hp.host.size() - 1) : hp.host;
    if (name.empty() || name.front() == '.' || name.back() == '.' ||
        name.find("..") != std::string::npos) {
      throw ValueError(what + ": address " + quoted + " has host \"" + hp.host +
                       "\", which has an empty label (a name is labels joined by single '.')" +
                       fix);
    }
  }
  const std::optional<int> number = parse_count(port);
  if (!number || *number > 65535) {
    throw ValueError(what + ": the port of address " + quoted + " is \"" + port +
                     "\", not a number in [1, 65535]" + fix);
  }
  if (*number == 0) {
    throw ValueError(what + ": address " + quoted + " has port 0, which would let the server "
                     "pick any free port, one the other tasks cannot know to dial; give every "
                     "task a fixed port in [1, 65535] (strata-launch picks free ones for a job "
                     "on this machine)");
  }
  hp.port = *number;
  return hp;
}

ClusterSpec::ClusterSpec(const std::map<std::string, std::vector<std::string>>& jobs) {
  for (const auto& [job, addresses] : jobs) {
    std::map<int, std::string>& tasks = jobs_[job];
    for (size_t i = 0; i < addresses.size(); ++i) tasks[int(i)] = addresses[i];
  }
  check();
}

ClusterSpec::ClusterSpec(std::map<std::string, std::map<int, std::string>> jobs)
    : jobs_(std::move(jobs)) {
  check();
}

void ClusterSpec::check() const {
  // "host:port" as compared (comparable_host: every loopback spelling is one) -> the task using it
  // and the address as written.
  std::map<std::string, std::pair<std::string, std::string>> owner;
  for (const auto& [job, tasks] : jobs_) {
    if (job.empty()) throw ValueError("ClusterSpec: a job has an empty name; name it, e.g. \"worker\"");
    for (const auto& [index, address] : tasks) {
      if (index < 0) {
        throw ValueError("ClusterSpec: job '" + job + "' has task index " +
                         std::to_string(index) + "; task indices are >= 0");
      }
      const HostPort hp = parse_host_port(address, "ClusterSpec: task " + task_name(job, index));
      const std::string key = comparable_host(hp.host) + "|" + std::to_string(hp.port);
      const auto [it, fresh] = owner.emplace(key, std::make_pair(task_name(job, index), address));
      if (fresh) continue;
      const auto& [other, other_address] = it->second;
      if (other_address == address) {
        throw ValueError("ClusterSpec: tasks " + other + " and " + task_name(job, index) +
                         " both have address \"" + address +
                         "\"; every task needs its own host:port");
      }
      throw ValueError("ClusterSpec: tasks " + other + " (\"" + other_address + "\") and " +
                       task_name(job, index) + " (\"" + address + "\") have the same address" +
                       (comparable_host(hp.host) == "localhost"
                            ? " (localhost, 127.0.0.1 and [::1] are all this machine's loopback "
                              "interface)"
                        : is_ipv6_literal(hp.host)
                            ? " (one IPv6 address, written two ways)"
                            : " (host names ignore case and a final '.')") +
                       "; every task needs its own host:port");
    }
  }
}

ClusterSpec ClusterSpec::from_json(const Json& cluster, const std::string& source) {
  if (!cluster.is_object()) {
    throw ValueError(source + ": \"cluster\" must be an object of job name -> list of "
                     "\"host:port\", e.g. {\"worker\": [\"localhost:20000\", \"localhost:20001\"]}; "
                     "got " + cluster.dump());
  }
  std::map<std::string, std::map<int, std::string>> jobs;
  for (const std::string& job : cluster.keys()) {
    const Json tasks = cluster.at(job);
    const std::string where = source + ": cluster job '" + job + "'";
    const auto address = [&](const Json& a, const std::string& index) {
      if (!a.is_string()) {
        throw ValueError(where + " task " + index + ": an address must be a \"host:port\" "
                         "string; got " + a.dump());
      }
      return a.as_string();
    };
    std::map<int, std::string>& out = jobs[job];
    if (tasks.is_array()) {
      for (size_t i = 0; i < tasks.size(); ++i) {
        out[int(i)] = address(tasks.at(i), std::to_string(i));
      }
    } else if (tasks.is_object()) {
      for (const std::string& key : tasks.keys()) {
        const std::optional<int> index = parse_count(key);
        if (!index) {
          throw ValueError(where + ": task index \"" + key +
                           "\" is not a non-negative integer");
        }
        out[*index] = address(tasks.at(key), key);
      }
    } else {
      throw ValueError(where + " must be a list of \"host:port\" addresses (or an object of "
                       "task index -> address); got " + tasks.dump());
    }
  }
  try {
    return ClusterSpec(std::move(jobs));
  } catch (const ValueError& e) {
    throw ValueError(source + ": " + e.what());
  }
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> names;
  for (const auto& [job, tasks] : jobs_) names.push_back(job);
  return names;
}

int ClusterSpec::num_tasks(const std::string& job) const {
  const auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : int(it->second.size());
}

std::vector<int> ClusterSpec::task_indices(const std::string& job) const {
  const auto it = jobs_.find(job);
  if (it == jobs_.end()) {
    throw ValueError("ClusterSpec: no job '" + job + "' in the cluster (jobs: " +
                     to_json().dump() + ")");
  }
  std::vector<int> out;
  for (const auto& [index, address] : it->second) out.push_back(index);
  return out;
}

std::string ClusterSpec::task_address(const std::string& job, int index) const {
  const auto it = jobs_.find(job);
  if (it != jobs_.end()) {
    const auto task = it->second.find(index);
    if (task != it->second.end()) return task->second;
  }
  throw ValueError("ClusterSpec: no task " + task_name(job, index) + " in the cluster " +
                   to_json().dump());
}

std::vector<std::string> ClusterSpec::job_tasks(const std::string& job) const {
  const std::vector<int> indices = task_indices(job);
  std::vector<std::string> out;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] != int(i)) {
      throw ValueError("ClusterSpec: job '" + job + "' has no task " + std::to_string(i) +
                       " (its tasks are not numbered 0.." + std::to_string(indices.size() - 1) +
                       ")");
    }
    out.push_back(task_address(job, indices[i]));
  }
  return out;
}

Json ClusterSpec::to_json() const {
  Json out = Json::object();
  for (const auto& [job, tasks] : jobs_) {
    bool dense = true;
    int expect = 0;
    for (const auto& [index, address] : tasks) dense = dense && index == expect++;
    Json value = dense ? Json::array() : Json::object();
    for (const auto& [index, address] : tasks) {
      if (dense) {
        value.push_back(address);
      } else {
        value.set(std::to_string(index), address);
      }
    }
    out.set(job, value);
  }
  return out;
}

}  // namespace strata::distribute
