// Cluster configuration as a job receives it from its environment: the input is TF_CONFIG
// (TFConfigClusterResolver: JSON, cluster spec, task, master, validation and roles), and also
// a Slurm hostlist and tasks-per-node list (the Slurm resolver's expansions).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "distribute/cluster_resolver/cluster_roles.h"
#include "distribute/cluster_resolver/slurm_cluster_resolver.h"
#include "distribute/cluster_resolver/tfconfig_cluster_resolver.h"
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
  setenv("TF_CONFIG", text.c_str(), 1);  // (stops at a NUL byte, as the environment would)
  strata::distribute::TFConfigClusterResolver resolver;
  try {
    const strata::distribute::ClusterSpec spec = resolver.cluster_spec();
    // Whatever was accepted is written back and read again unchanged.
    if (strata::distribute::ClusterSpec::from_json(spec.to_json(), "round trip") != spec) {
      __builtin_trap();
    }
    (void)resolver.rpc_layer();
    (void)resolver.environment();
    (void)resolver.master();
    resolver.validate();
    const std::string type = *resolver.task_type();
    const int id = *resolver.task_id();
    (void)strata::distribute::is_chief(spec, type, id);
    (void)strata::distribute::coordinator_task(spec);
    if (type != "ps") {
      (void)strata::distribute::worker_count(spec, type);
      (void)strata::distribute::id_in_cluster(spec, type, id);
    }
  } catch (const strata::Error&) {
  }
  return 0;
}
