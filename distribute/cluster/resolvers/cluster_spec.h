// ClusterSpec: the tasks of a training cluster by job (TensorFlow's tf.train.ClusterSpec):
// job name ("chief", "worker", "ps", "evaluator", the legacy "master", or any other) -> task
// index -> "host:port".
//
//   ClusterSpec spec({{"worker", {"host0:2222", "host1:2222"}}, {"ps", {"host2:2222"}}});
//   spec.task_address("worker", 1);   // "host1:2222"
//   spec.num_tasks("worker");         // 2
//
// Every address is checked when the spec is made, and a violation is a ValueError naming the
// task: "host:port", the host a name (letters, digits, '.', '-', '_') or an IP address (IPv6 in
// brackets, "[::1]:2222"), the port a number in [1, 65535]. Port 0 (for a server, "any free
// port") is refused: the other tasks could not know which port to dial. No two tasks may share an
// address, compared as loopback_address.h's comparable_host does: "localhost:2222",
// "127.0.0.1:2222" and "[::1]:2222" are one address, host names ignore case, and no other name
// is resolved (a name may not resolve until its pod starts; TensorFlow does not resolve them
// either).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata {
class Json;
}

namespace strata::distribute {

class ClusterSpec {
 public:
  ClusterSpec() = default;
  // Jobs whose tasks are numbered 0, 1, ... in list order.
  explicit ClusterSpec(const std::map<std::string, std::vector<std::string>>& jobs);
  // Jobs with explicit (possibly sparse) task indices, as TF_CONFIG's {"worker": {"1": "h:p"}}.
  explicit ClusterSpec(std::map<std::string, std::map<int, std::string>> jobs);
  // TF_CONFIG's "cluster" value: an object of job name -> list of addresses, or -> object of
  // index -> address. `source` names where it came from in errors ("TF_CONFIG").
  static ClusterSpec from_json(const Json& cluster, const std::string& source);

  bool empty() const { return jobs_.empty(); }
  // Job names, sorted.
  std::vector<std::string> jobs() const;
  bool has_job(const std::string& job) const { return jobs_.count(job) > 0; }
  // The number of tasks of `job` (0 for an unknown job).
  int num_tasks(const std::string& job) const;
  // Task indices of `job`, ascending. ValueError for an unknown job.
  std::vector<int> task_indices(const std::string& job) const;
  // The address of task `index` of `job`. ValueError naming the job's tasks when absent.
  std::string task_address(const std::string& job, int index) const;
  // Addresses of `job` in index order; ValueError unless its indices are 0..n-1.
  std::vector<std::string> job_tasks(const std::string& job) const;
  // job -> index -> address.
  const std::map<std::string, std::map<int, std::string>>& as_dict() const { return jobs_; }
  // {"worker": ["h:p", ...], ...} (an object of index -> address for a sparse job).
  Json to_json() const;

  bool operator==(const ClusterSpec& other) const { return jobs_ == other.jobs_; }
  bool operator!=(const ClusterSpec& other) const { return !(*this == other); }

 private:
  void check() const;
  std::map<std::string, std::map<int, std::string>> jobs_;
};

// `text` as a count or index: digits only ("0".."999999999"), else nullopt. What TF_CONFIG's task
// indices, ports and Slurm's counts are written as (no sign, no spaces, nothing after).
std::optional<int> parse_count(const std::string& text);

// Splits "host:port" into host and port; ValueError naming `what` and the fix when it is not one
// (the rules above: a valid host, a port in [1, 65535]).
struct HostPort {
  std::string host;
  int port = 0;
};
HostPort parse_host_port(const std::string& address, const std::string& what);

}  // namespace strata::distribute
