// Cluster configuration as a job receives it from its environment: the input is TF_CONFIG
// (TFConfigClusterResolver: JSON, cluster spec and its address rules, task, master, validation,
// roles, RunConfig and the parameter-server start-up checks), and also a Slurm hostlist and
// tasks-per-node list (the Slurm resolver's expansions).
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "distribute/cluster/loopback_address.h"
#include "distribute/cluster/resolvers/cluster_roles.h"
#include "distribute/cluster/resolvers/run_config.h"
#include "distribute/cluster/resolvers/slurm_cluster_resolver.h"
#include "distribute/cluster/resolvers/tfconfig_cluster_resolver.h"
#include "distribute/parameter_server/ps_roles.h"
#include "framework/config/json.h"
#include "framework/core/error.h"
#include "fuzz/fuzz_support.h"

namespace strata::fuzz {

void write_seeds(const std::string& dir) {
  write_seed(dir, "two_workers.json",
             R"({"cluster": {"worker": ["localhost:20000", "localhost:20001"]},)"
             R"( "task": {"type": "worker", "index": 1}})");
  write_seed(dir, "ps.json",
             R"({"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],)"
             R"( "ps": ["host3:2222"], "evaluator": ["host4:2222"]}, "rpc_layer": "grpc",)"
             R"( "environment": "cloud", "task": {"type": "ps", "index": "0"}})");
  write_seed(dir, "sparse_master.json",
             R"({"cluster": {"master": ["[::1]:1"], "worker": {"1": "w1:2", "3": "w3:2"}},)"
             R"( "session_master": "s:1", "task": {"type": "worker", "index": 3}})");
  // The Keras tutorial's evaluator: the cluster is optional.
  write_seed(dir, "evaluator_alone.json",
             R"({"cluster": {"evaluator": ["host7:2222"]}, "task": {"type": "evaluator", "index": 0}})");
  write_seed(dir, "evaluator_no_cluster.json", R"({"task": {"type": "evaluator", "index": 0}})");
  // Errors: port 0, one loopback address spelt two ways, a job no task type has, two chiefs.
  write_seed(dir, "port_zero.json",
             R"({"cluster": {"chief": ["localhost:0"], "worker": ["localhost:1"]},)"
             R"( "task": {"type": "chief", "index": 0}})");
  write_seed(dir, "loopback_twice.json",
             R"({"cluster": {"chief": ["LOCALHOST:7"], "worker": ["127.0.0.1:7", "[::1]:8"]},)"
             R"( "task": {"type": "worker", "index": 0}})");
  write_seed(dir, "other_job.json",
             R"({"cluster": {"chief": ["h0:1"], "ps": ["h1:1"], "worker": ["h2:1"],)"
             R"( "some_arbitrary_name": ["h3:1"]}, "task": {"type": "chief", "index": 0}})");
  write_seed(dir, "two_chiefs.json",
             R"({"cluster": {"chief": ["h0:1", "h1:1"], "ps": ["h2:1"], "worker": ["h3:1"]},)"
             R"( "task": {"type": "chief", "index": 1}})");
  write_seed(dir, "hostlist.txt", "n[0001-0003],m5,o[3-4,6,7-9]");
  write_seed(dir, "tasks_per_node.txt", "3(x2),2,11(x4)");
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(strata::fuzz::as_view(data, size));
  try {
    (void)strata::distribute::expand_hostlist(text);
  } catch (const strata::Error&) {
  }
  try {
    (void)strata::distribute::expand_tasks_per_node(text);
  } catch (const strata::Error&) {
  }
  // (Stops at a NUL byte, as the environment would.) putenv of buffers of our own, taking turns:
  // glibc's setenv keeps every value it was ever given, a leak that grows with each input.
  static std::string buffers[2];
  static int turn = 0;
  turn ^= 1;
  buffers[turn] = "TF_CONFIG=" + std::string(text.c_str());
  putenv(buffers[turn].data());
  strata::distribute::TFConfigClusterResolver resolver;
  try {
    const strata::distribute::ClusterSpec spec = resolver.cluster_spec();
    // Whatever was accepted is written back and read again unchanged.
    if (strata::distribute::ClusterSpec::from_json(spec.to_json(), "round trip") != spec) {
      __builtin_trap();
    }
    // No two accepted tasks share an address, compared as the rules compare them.
    std::set<std::string> addresses;
    for (const auto& [job, tasks] : spec.as_dict()) {
      for (const auto& [index, address] : tasks) {
        const auto hp = strata::distribute::parse_host_port(address, "fuzz");
        const std::string host = strata::distribute::comparable_host(hp.host);
        if (hp.port < 1 || hp.port > 65535 || strata::distribute::comparable_host(host) != host ||
            !addresses.insert(host + "|" + std::to_string(hp.port)).second) {
          __builtin_trap();
        }
      }
    }
    (void)resolver.rpc_layer();
    (void)resolver.environment();
    try {
      (void)strata::distribute::RunConfig::from(resolver);
    } catch (const strata::Error&) {
    }
    try {
      strata::distribute::validate_parameter_server_cluster(resolver);
    } catch (const strata::Error&) {
    }
    try {
      (void)strata::distribute::parameter_server_role(resolver);
    } catch (const strata::Error&) {
    }
    (void)resolver.master();
    resolver.validate();
    const std::string type = *resolver.task_type();
    const int id = *resolver.task_id();
    (void)strata::distribute::is_chief(spec, type, id);
    (void)strata::distribute::collective_leader(spec, type, id);
    if (type != "ps") {
      (void)strata::distribute::worker_count(spec, type);
      (void)strata::distribute::id_in_cluster(spec, type, id);
    }
    (void)strata::distribute::coordinator_task(spec);
  } catch (const strata::Error&) {
  }
  return 0;
}
