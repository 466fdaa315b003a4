// Cluster resolvers: TensorFlow's own test cases (tfconfig_cluster_resolver_test.py,
// slurm_cluster_resolver_test.py) ported, plus the errors a malformed TF_CONFIG or Slurm
// environment must give. multi_worker_util_test.py, tf.estimator's run_config_test.py and the
// parameter-server cluster checks are ported in test_tf_config_conformance.cc.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "distribute/cluster/resolvers/cluster_roles.h"
#include "distribute/cluster/resolvers/slurm_cluster_resolver.h"
#include "distribute/cluster/resolvers/tfconfig_cluster_resolver.h"
#include "tests/distribute/scoped_environment.h"
#include "tests/support/test_helpers.h"

namespace strata::testing {
namespace {

using distribute::ClusterSpec;
using distribute::SlurmClusterResolver;
using distribute::SlurmClusterResolverOptions;
using distribute::TFConfigClusterResolver;
using distribute::TFConfigClusterResolverOptions;

using ScopedEnv = ScopedEnvironment;

const char* kPsWorkerCluster = R"({
  "cluster": {"ps": ["ps0:2222", "ps1:2222"],
              "worker": ["worker0:2222", "worker1:2222", "worker2:2222"]},
  "task": {"type": "ps", "index": 0}
})";

ClusterSpec ps_worker_spec() {
  return ClusterSpec(std::map<std::string, std::vector<std::string>>{
      {"ps", {"ps0:2222", "ps1:2222"}},
      {"worker", {"worker0:2222", "worker1:2222", "worker2:2222"}}});
}

// --- tfconfig_cluster_resolver_test.py ---

TEST(TFConfigClusterResolver, NormalClusterSpecRead) {
  ScopedEnv env{{"TF_CONFIG", kPsWorkerCluster}};
  const ClusterSpec spec = TFConfigClusterResolver().cluster_spec();
  EXPECT_EQ(spec, ps_worker_spec());
  EXPECT_EQ(spec.jobs(), (std::vector<std::string>{"ps", "worker"}));
  EXPECT_EQ(spec.job_tasks("worker"),
            (std::vector<std::string>{"worker0:2222", "worker1:2222", "worker2:2222"}));
  // The spec round-trips through its JSON form (as_dict in TensorFlow).
  EXPECT_EQ(ClusterSpec::from_json(spec.to_json(), "test"), spec);
}

TEST(TFConfigClusterResolver, AutomaticMasterRead) {
  ScopedEnv env{{"TF_CONFIG", kPsWorkerCluster}};
  EXPECT_EQ(TFConfigClusterResolver().master(), "ps0:2222");
}

TEST(TFConfigClusterResolver, SpecifiedTaskTypeAndIndexMasterRead) {
  ScopedEnv env{{"TF_CONFIG", kPsWorkerCluster}};
  EXPECT_EQ(TFConfigClusterResolver().master("worker", 1), "worker1:2222");
}

TEST(TFConfigClusterResolver, SessionMasterRead) {
  ScopedEnv env{{"TF_CONFIG", R"({
    "cluster": {"ps": ["ps0:2222", "ps1:2222"], "worker": ["worker0:2222"]},
    "session_master": "sessionmaster:2222",
    "task": {"type": "ps", "index": 0}})"}};
  EXPECT_EQ(TFConfigClusterResolver().master(), "sessionmaster:2222");
}

TEST(TFConfigClusterResolver, RpcLayerRead) {
  ScopedEnv env{{"TF_CONFIG", R"({
    "cluster": {"ps": ["ps0:2222", "ps1:2222"], "worker": ["worker0:2222"]},
    "rpc_layer": "grpc",
    "task": {"type": "ps", "index": 0}})"}};
  EXPECT_EQ(TFConfigClusterResolver().master(), "grpc://ps0:2222");
}

TEST(TFConfigClusterResolver, TaskTypeIndexRpcRead) {
  ScopedEnv env{{"TF_CONFIG", R"({
    "cluster": {"ps": ["ps0:2222", "ps1:2222"], "worker": ["worker0:2222"]},
    "rpc_layer": "grpc",
    "task": {"type": "ps", "index": 0}})"}};
  TFConfigClusterResolver r;
  EXPECT_EQ(r.task_type(), "ps");
  EXPECT_EQ(r.task_id(), 0);
  EXPECT_EQ(r.rpc_layer(), "grpc");
}

TEST(TFConfigClusterResolver, ParameterOverrides) {
  ScopedEnv env{{"TF_CONFIG", R"({
    "cluster": {"ps": ["ps0:2222", "ps1:2222"],
                "worker": ["worker0:2222", "worker1:2222", "worker2:2222"]},
    "rpc_layer": "grpc",
    "task": {"type": "ps", "index": 1}})"}};
  TFConfigClusterResolver r(TFConfigClusterResolverOptions().task_type("ps").task_id(0));
  EXPECT_EQ(r.master(), "grpc://ps0:2222");
  EXPECT_EQ(r.task_type(), "ps");
  EXPECT_EQ(r.task_id(), 0);
  r.set_task_type("worker");
  r.set_task_id(1);
  r.set_rpc_layer("test");
  EXPECT_EQ(r.master(), "test://worker1:2222");
  EXPECT_EQ(r.task_type(), "worker");
  EXPECT_EQ(r.task_id(), 1);
  EXPECT_EQ(r.rpc_layer(), "test");
}

TEST(TFConfigClusterResolver, TaskTypeCastToString) {
  ScopedEnv env{{"TF_CONFIG", R"({
    "cluster": {"123456": ["ps0:2222", "ps1:2222"], "worker": ["worker0:2222"]},
    "rpc_layer": "grpc",
    "task": {"type": 123456, "index": 0}})"}};
  EXPECT_EQ(TFConfigClusterResolver().task_type(), "123456");
}

TEST(TFConfigClusterResolver, TaskIndexCastToInteger) {
  ScopedEnv env{{"TF_CONFIG", R"({
    "cluster": {"ps": ["ps0:2222", "ps1:2222"], "worker": ["worker0:2222"]},
    "task": {"type": "ps", "index": "1"}})"}};
  EXPECT_EQ(TFConfigClusterResolver().task_id(), 1);
}

TEST(TFConfigClusterResolver, TaskIndexOverride) {
  ScopedEnv env{{"TF_CONFIG", R"({
    "cluster": {"worker": ["worker0:2222", "worker1:2222"]},
    "task": {"type": "worker", "index": "0"}})"}};
  EXPECT_EQ(TFConfigClusterResolver(TFConfigClusterResolverOptions().task_id(1)).task_id(), 1);
}

TEST(TFConfigClusterResolver, ZeroItemsInClusterSpecMasterRead) {
  ScopedEnv env{{"TF_CONFIG", "{}"}};
  TFConfigClusterResolver r;
  EXPECT_EQ(r.master(), "");
  EXPECT_TRUE(r.cluster_spec().empty());
  EXPECT_EQ(r.task_type(), std::nullopt);
  EXPECT_EQ(r.task_id(), std::nullopt);
}

TEST(TFConfigClusterResolver, UnsetTfConfigIsASingleTask) {
  ScopedEnv env{{"TF_CONFIG", std::nullopt}};
  TFConfigClusterResolver r;
  EXPECT_TRUE(r.cluster_spec().empty());
  EXPECT_EQ(r.master(), "");
  EXPECT_EQ(r.rpc_layer(), "");
}

TEST(TFConfigClusterResolver, OneItemInClusterSpecMasterRead) {
  ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["worker0:2222"]}})"}};
  EXPECT_EQ(TFConfigClusterResolver().master(), "");
}

TEST(TFConfigClusterResolver, EnvironmentFromTfConfigOrOverride) {
  ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["w0:1"]}, "environment": "cloud",
                                  "task": {"type": "worker", "index": 0}})"}};
  EXPECT_EQ(TFConfigClusterResolver().environment(), "cloud");
  EXPECT_EQ(TFConfigClusterResolver(TFConfigClusterResolverOptions().environment("google"))
                .environment(),
            "google");
}

TEST(TFConfigClusterResolver, SparseTaskIndicesAndTheLegacyMasterJob) {
  ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"master": ["m:1"], "worker": {"1": "w1:1", "3": "w3:1"}},
                                  "task": {"type": "worker", "index": 3}})"}};
  TFConfigClusterResolver r;
  const ClusterSpec spec = r.cluster_spec();
  EXPECT_EQ(spec.task_indices("worker"), (std::vector<int>{1, 3}));
  EXPECT_EQ(spec.task_address("worker", 3), "w3:1");
  r.validate();
  EXPECT_TRUE(distribute::is_chief(spec, "master", 0));
  EXPECT_FALSE(distribute::is_chief(spec, "worker", 1));
  EXPECT_EQ(distribute::coordinator_task(spec).type, "master");
  expect_error<ValueError>([&] { spec.job_tasks("worker"); }, {"worker", "no task 0"});
}

// --- errors of a malformed TF_CONFIG: each names TF_CONFIG, the problem and the fix ---

TEST(TFConfigClusterResolver, MalformedJsonNamesTfConfig) {
  ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["a:1"]}, "task": )"}};
  expect_error<ValueError>([] { TFConfigClusterResolver().cluster_spec(); },
                           {"TF_CONFIG is not valid JSON", "\"task\": {\"type\": \"worker\""});
  ScopedEnv array{{"TF_CONFIG", "[1, 2]"}};
  expect_error<ValueError>([] { TFConfigClusterResolver().task_type(); },
                           {"TF_CONFIG must be a JSON object"});
}

TEST(TFConfigClusterResolver, WrongShapesAreValueErrors) {
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": ["a:1", "b:1"]})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().cluster_spec(); },
                             {"TF_CONFIG", "\"cluster\" must be an object"});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": "a:1"}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().cluster_spec(); },
                             {"TF_CONFIG", "job 'worker'", "list of \"host:port\""});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["a:1", 7]}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().cluster_spec(); },
                             {"TF_CONFIG", "worker' task 1", "string"});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["a:1"]}, "task": "worker"})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().task_type(); },
                             {"TF_CONFIG", "\"task\" must be an object"});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": -1}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().task_id(); },
                             {"TF_CONFIG", "\"index\" must be a non-negative integer", "-1"});
  }
}

TEST(TFConfigClusterResolver, BadAddressesAreValueErrorsNamingTheTask) {
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["localhost:20000", "localhost:port"]}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().cluster_spec(); },
                             {"TF_CONFIG", "worker 1", "\"port\"", "not a number"});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["localhost:20000", "localhost"]}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().cluster_spec(); },
                             {"worker 1", "has no port", "host:port"});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["localhost:70000"]}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().cluster_spec(); },
                             {"70000", "[1, 65535]"});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"chief": ["h:1"], "worker": ["h:2", "h:1"]}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().cluster_spec(); },
                             {"chief 0", "worker 1", "both have address \"h:1\""});
  }
  // IPv6 in brackets is an address; without them it is ambiguous.
  EXPECT_EQ(distribute::parse_host_port("[::1]:2222", "t").host, "::1");
  EXPECT_EQ(distribute::parse_host_port("[::1]:2222", "t").port, 2222);
  expect_error<ValueError>([] { distribute::parse_host_port("::1:2222", "t"); }, {"brackets"});
  // Empty labels name no host (fuzz_cluster_config found "12.1700..:6": its two spellings,
  // "12.1700.." and "12.1700.", compared as two hosts); one final '.' is an absolute name.
  for (const char* address : {"12.1700..:6", "a..b:1", ".a:1", ".:1", "..:1"}) {
    SCOPED_TRACE(address);
    expect_error<ValueError>([&] { distribute::parse_host_port(address, "t"); },
                             {"empty label", address});
  }
  EXPECT_EQ(distribute::parse_host_port("host.example.:2222", "t").host, "host.example.");
  EXPECT_EQ(distribute::parse_host_port("127.0.0.1.:2222", "t").host, "127.0.0.1.");
}

TEST(TFConfigClusterResolver, ValidateNamesTheTaskMissingFromTheCluster) {
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "wroker", "index": 0}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().validate(); },
                             {"TF_CONFIG", "unknown type 'wroker'", "\"chief\", \"worker\""});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().validate(); },
                             {"TF_CONFIG", "not in the cluster", "no job 'chief'"});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 2}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().validate(); },
                             {"TF_CONFIG", "\"index\": 2", "2 task(s), with indices [0, 1]"});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"worker": ["a:1"]}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().validate(); },
                             {"TF_CONFIG", "needs a \"type\" and an \"index\""});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"chief": ["a:1", "c:1"], "worker": ["b:1"]}, "task": {"type": "worker", "index": 0}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().validate(); },
                             {"2 'chief' tasks", "at most one"});
  }
  {
    ScopedEnv env{{"TF_CONFIG", R"({"cluster": {"chief": ["a:1"], "master": ["c:1"], "worker": ["b:1"]}, "task": {"type": "worker", "index": 0}})"}};
    expect_error<ValueError>([] { TFConfigClusterResolver().validate(); },
                             {"both a 'chief' and a 'master'"});
  }
}

// --- cluster_roles.h on the clusters above (TensorFlow's cases: test_tf_config_conformance.cc) ---

TEST(ClusterRoles, IsChiefWithChief) {
  const ClusterSpec spec(std::map<std::string, std::vector<std::string>>{
      {"chief", {"127.0.0.1:1234"}},
      {"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}},
      {"ps", {"127.0.0.1:1926", "127.0.0.1:3141"}}});
  EXPECT_TRUE(distribute::is_chief(spec, "chief", 0));
  EXPECT_FALSE(distribute::is_chief(spec, "worker", 0));
  EXPECT_EQ(distribute::worker_count(spec, "worker"), 3);
  EXPECT_EQ(distribute::id_in_cluster(spec, "chief", 0), 0);
  EXPECT_EQ(distribute::id_in_cluster(spec, "worker", 1), 2);
  EXPECT_EQ(distribute::coordinator_task(spec).type, "chief");
  expect_error<ValueError>([&] { distribute::id_in_cluster(spec, "ps", 0); }, {"no training id"});
}

TEST(ClusterRoles, IsChiefWithoutChief) {
  const ClusterSpec spec(std::map<std::string, std::vector<std::string>>{
      {"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}}});
  EXPECT_TRUE(distribute::is_chief(spec, "worker", 0));
  EXPECT_FALSE(distribute::is_chief(spec, "worker", 1));
  expect_error<ValueError>([&] { distribute::is_chief(spec, "chief", 0); }, {"no job 'chief'"});
  expect_error<ValueError>([&] { distribute::is_chief(spec, "worker", 2); }, {"\"index\": 2"});
  EXPECT_EQ(distribute::worker_count(spec, "worker"), 2);
  EXPECT_EQ(distribute::id_in_cluster(spec, "worker", 1), 1);
  const distribute::TaskAddress lead = distribute::coordinator_task(spec);
  EXPECT_EQ(lead.type, "worker");
  EXPECT_EQ(lead.index, 0);
}

TEST(ClusterRoles, EvaluatorIsItsOwnChief) {
  const ClusterSpec spec(std::map<std::string, std::vector<std::string>>{
      {"chief", {"c:1"}}, {"worker", {"w:1"}}, {"evaluator", {"e:1"}}});
  EXPECT_TRUE(distribute::is_chief(spec, "evaluator", 0));
  EXPECT_EQ(distribute::worker_count(spec, "evaluator"), 1);
  EXPECT_EQ(distribute::id_in_cluster(spec, "evaluator", 0), 0);
  EXPECT_EQ(distribute::worker_count(spec, "chief"), 2);
}

// --- slurm_cluster_resolver_test.py ---

TEST(SlurmClusterResolver, ExpandHostlist) {
  using V = std::vector<std::string>;
  EXPECT_EQ(distribute::expand_hostlist("n1"), (V{"n1"}));
  EXPECT_EQ(distribute::expand_hostlist("n[1,3]"), (V{"n1", "n3"}));
  EXPECT_EQ(distribute::expand_hostlist("n[1-3]"), (V{"n1", "n2", "n3"}));
  EXPECT_EQ(distribute::expand_hostlist("n[1-2],m5,o[3-4,6,7-9]"),
            (V{"n1", "n2", "m5", "o3", "o4", "o6", "o7", "o8", "o9"}));
  EXPECT_EQ(distribute::expand_hostlist("n[0001-0003],m5,o[009-011]"),
            (V{"n0001", "n0002", "n0003", "m5", "o009", "o010", "o011"}));
  EXPECT_EQ(distribute::expand_hostlist("node[01-04,07]"),
            (V{"node01", "node02", "node03", "node04", "node07"}));
}

TEST(SlurmClusterResolver, MalformedHostlistsAreValueErrors) {
  for (const char* bad : {"", "n[1-3", "n1-3]", "n[[1]]", "n[1-3]x", "n[a-b]", "n[3-1]", "a,,b",
                          "n[0-99999999]"}) {
    SCOPED_TRACE(bad);
    expect_error<ValueError>([&] { distribute::expand_hostlist(bad); },
                             {"invalid Slurm hostlist", "node[01-04,07]"});
  }
  // Names over DNS's 253 characters, and expansions whose text is over 16 MiB (fuzz_cluster_config
  // ran out of memory on a 180-character prefix over [0-1000017]: 190 MB of names).
  expect_error<ValueError>([] { distribute::expand_hostlist(std::string(254, 'n')); },
                           {"254 characters", "253"});
  expect_error<ValueError>(
      [] { distribute::expand_hostlist(std::string(180, 'n') + "[0-1000017]"); },
      {"invalid Slurm hostlist", "16777216 bytes"});
  EXPECT_EQ(distribute::expand_hostlist(std::string(253, 'n')).size(), 1u);
}

TEST(SlurmClusterResolver, ExpandTasksPerNode) {
  using V = std::vector<int>;
  EXPECT_EQ(distribute::expand_tasks_per_node("2"), (V{2}));
  EXPECT_EQ(distribute::expand_tasks_per_node("2,1,3"), (V{2, 1, 3}));
  EXPECT_EQ(distribute::expand_tasks_per_node("3(x2),2,1"), (V{3, 3, 2, 1}));
  EXPECT_EQ(distribute::expand_tasks_per_node("3(x2),2,11(x4)"), (V{3, 3, 2, 11, 11, 11, 11}));
  EXPECT_EQ(distribute::expand_tasks_per_node("13(x10)"), V(10, 13));
  for (const char* bad : {"", "x", "2(x)", "2(3)", "2(x2", "-1", "2,,1"}) {
    SCOPED_TRACE(bad);
    expect_error<ValueError>([&] { distribute::expand_tasks_per_node(bad); },
                             {"invalid Slurm tasks-per-node list"});
  }
}

ClusterSpec three_hosts(const std::map<std::string, std::vector<std::string>>& jobs) {
  return ClusterSpec(jobs);
}

TEST(SlurmClusterResolver, SimpleRetrievalFromEnv) {
  ScopedEnv env{{"SLURM_PROCID", "0"},
                 {"SLURM_STEP_NUM_TASKS", "3"},
                 {"SLURM_STEP_TASKS_PER_NODE", "1(x3)"},
                 {"SLURM_STEP_NODELIST", "t02n13,t02n41,t02n43"},
                 {"CUDA_VISIBLE_DEVICES", "0"}};
  SlurmClusterResolver r;
  EXPECT_EQ(r.cluster_spec(),
            three_hosts({{"worker", {"t02n13:8888", "t02n41:8888", "t02n43:8888"}}}));
  EXPECT_EQ(r.master("worker", 0, std::string("grpc")), "grpc://t02n13:8888");
  EXPECT_EQ(r.num_accelerators(), (std::map<std::string, int>{{"GPU", 1}}));
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "0");
}

TEST(SlurmClusterResolver, SimpleSuccessfulRetrieval) {
  ScopedEnv env{{"SLURM_PROCID", "0"},
                 {"SLURM_STEP_NUM_TASKS", "3"},
                 {"SLURM_STEP_NODELIST", "t02n13,t02n41,t02n43"}};
  SlurmClusterResolver r(SlurmClusterResolverOptions()
                             .jobs({{"ps", 1}, {"worker", 2}})
                             .port_base(8888)
                             .tasks_per_node(1)
                             .gpus_per_node(1)
                             .gpus_per_task(1)
                             .auto_set_gpu(false));
  EXPECT_EQ(r.cluster_spec(),
            three_hosts({{"ps", {"t02n13:8888"}}, {"worker", {"t02n41:8888", "t02n43:8888"}}}));
  EXPECT_EQ(r.task_type(), "ps");
  EXPECT_EQ(r.task_id(), 0);
}

TEST(SlurmClusterResolver, SimpleMasterRetrieval) {
  ScopedEnv env{{"SLURM_PROCID", "0"},
                 {"SLURM_STEP_NUM_TASKS", "3"},
                 {"SLURM_STEP_NODELIST", "t02n13,t02n41,t02n43"}};
  SlurmClusterResolver r(SlurmClusterResolverOptions()
                             .jobs({{"ps", 1}, {"worker", 2}})
                             .tasks_per_node(1)
                             .gpus_per_node(1)
                             .gpus_per_task(1)
                             .auto_set_gpu(false));
  r.set_task_type("worker");
  r.set_task_id(1);
  EXPECT_EQ(r.master(), "grpc://t02n43:8888");
  r.set_rpc_layer("ab");
  EXPECT_EQ(r.master("ps", 0), "ab://t02n13:8888");
  EXPECT_EQ(r.master("ps", 0, std::string("test")), "test://t02n13:8888");
}

TEST(SlurmClusterResolver, TaskPerNodeNotSetRetrieval) {
  ScopedEnv env{{"SLURM_PROCID", "0"},
                 {"SLURM_STEP_NUM_TASKS", "3"},
                 {"SLURM_STEP_TASKS_PER_NODE", "1(x3)"},
                 {"SLURM_STEP_NODELIST", "t02n13,t02n41,t02n43"}};
  SlurmClusterResolver r(SlurmClusterResolverOptions()
                             .jobs({{"ps", 1}, {"worker", 2}})
                             .gpus_per_node(1)
                             .gpus_per_task(1)
                             .auto_set_gpu(false));
  EXPECT_EQ(r.cluster_spec(),
            three_hosts({{"ps", {"t02n13:8888"}}, {"worker", {"t02n41:8888", "t02n43:8888"}}}));
}

TEST(SlurmClusterResolver, MultiTaskPerNodeRetrieval) {
  ScopedEnv env{{"SLURM_PROCID", "1"},
                 {"SLURM_STEP_NUM_TASKS", "5"},
                 {"SLURM_STEP_TASKS_PER_NODE", "2(x2),1"},
                 {"SLURM_STEP_NODELIST", "t02n13,t02n41,t02n43"},
                 {"CUDA_VISIBLE_DEVICES", ""}};
  SlurmClusterResolver r(SlurmClusterResolverOptions()
                             .jobs({{"ps", 1}, {"worker", 4}})
                             .gpus_per_node(2)
                             .gpus_per_task(1)
                             .auto_set_gpu(true));
  EXPECT_EQ(r.cluster_spec(),
            three_hosts({{"ps", {"t02n13:8888"}},
                         {"worker", {"t02n13:8889", "t02n41:8888", "t02n41:8889", "t02n43:8888"}}}));
  EXPECT_EQ(r.task_type(), "worker");
  EXPECT_EQ(r.task_id(), 0);
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "1");
}

TEST(SlurmClusterResolver, MultipleGpusPerTaskRetrieval) {
  ScopedEnv env{{"SLURM_PROCID", "1"},
                 {"SLURM_STEP_NUM_TASKS", "5"},
                 {"SLURM_STEP_TASKS_PER_NODE", "2(x2),1"},
                 {"SLURM_STEP_NODELIST", "t02n13,t02n41,t02n43"},
                 {"CUDA_VISIBLE_DEVICES", ""}};
  SlurmClusterResolver r(SlurmClusterResolverOptions()
                             .jobs({{"ps", 1}, {"worker", 4}})
                             .gpus_per_node(4)
                             .gpus_per_task(2)
                             .auto_set_gpu(true));
  EXPECT_EQ(r.cluster_spec(),
            three_hosts({{"ps", {"t02n13:8888"}},
                         {"worker", {"t02n13:8889", "t02n41:8888", "t02n41:8889", "t02n43:8888"}}}));
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "2,3");
  EXPECT_EQ(r.visible_devices(), "2,3");
}

TEST(SlurmClusterResolver, CpuOnlyNodesGetNoGpusAndKeepTheirEnvironment) {
  ScopedEnv env{{"SLURM_PROCID", "2"},
                 {"SLURM_STEP_NUM_TASKS", std::nullopt},
                 {"SLURM_NTASKS", "4"},
                 {"SLURM_STEP_TASKS_PER_NODE", std::nullopt},
                 {"SLURM_TASKS_PER_NODE", "2(x2)"},
                 {"SLURM_STEP_NODELIST", std::nullopt},
                 {"SLURM_JOB_NODELIST", "cpu[1-2]"},
                 {"CUDA_VISIBLE_DEVICES", std::nullopt}};
  SlurmClusterResolver r(SlurmClusterResolverOptions().gpus_per_node(0));
  EXPECT_EQ(r.cluster_spec(),
            three_hosts({{"worker", {"cpu1:8888", "cpu1:8889", "cpu2:8888", "cpu2:8889"}}}));
  EXPECT_EQ(r.task_type(), "worker");
  EXPECT_EQ(r.task_id(), 2);
  EXPECT_TRUE(r.num_accelerators().empty());
  EXPECT_EQ(std::getenv("CUDA_VISIBLE_DEVICES"), nullptr);
}

TEST(SlurmClusterResolver, InconsistentEnvironmentsAreValueErrors) {
  {
    ScopedEnv env{{"SLURM_PROCID", std::nullopt}};
    expect_error<ValueError>([] { SlurmClusterResolver r; },
                             {"SLURM_PROCID is not set", "srun", "TF_CONFIG"});
  }
  {
    ScopedEnv env{{"SLURM_PROCID", "zero"}};
    expect_error<ValueError>([] { SlurmClusterResolver r; }, {"SLURM_PROCID", "\"zero\""});
  }
  ScopedEnv env{{"SLURM_PROCID", "0"},
                 {"SLURM_STEP_NUM_TASKS", "3"},
                 {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
                 {"SLURM_STEP_NODELIST", "a,b,c"}};
  expect_error<ValueError>([] { SlurmClusterResolver r(SlurmClusterResolverOptions().gpus_per_node(0)); },
                           {"3 host(s)", "2 count(s)", "tasks_per_node"});
  expect_error<ValueError>(
      [] {
        SlurmClusterResolver r(
            SlurmClusterResolverOptions().tasks_per_node(1).jobs({{"worker", 5}}).gpus_per_node(0));
      },
      {"ask for 5 task(s)", "the step has 3"});
  expect_error<ValueError>(
      [] {
        SlurmClusterResolver r(
            SlurmClusterResolverOptions().tasks_per_node(2).gpus_per_node(2).gpus_per_task(2));
      },
      {"2 task(s) of 2 GPU(s)", "has 2"});
}

}  // namespace
}  // namespace strata::testing
