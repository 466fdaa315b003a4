// TF_CONFIG exactly as TensorFlow reads it: the cases of TensorFlow's own tests, ported one by one
// (each TEST names the test it ports), with Strata's functions in place of TensorFlow's:
//
//   multi_worker_util.py (tensorflow/python/distribute)  cluster_roles.h: validate_cluster,
//     normalize_cluster_spec, _validate_cluster_spec,     validate_task, is_chief, worker_count,
//     is_chief, worker_count, task_count, id_in_cluster,  ClusterSpec::num_tasks, id_in_cluster,
//     collective_leader                                   collective_leader
//   tf.estimator RunConfig's distributed settings        run_config.h: RunConfig::from
//     (tensorflow/estimator run_config.py)
//   ParameterServerStrategyV2._verify_args_and_config    ps_roles.h: validate_parameter_server_
//     (parameter_server_strategy_v2.py)                   cluster, through ParameterServerStrategy
//                                                         and parameter_server_role
//
// Where Strata deliberately differs, the test says so ("Strata:") and checks Strata's answer;
// cluster_roles.h and run_config.h list the differences and their reasons. Also here: the
// address rules of cluster_spec.h (no port 0; "localhost", 127.0.0.1 and [::1] are one host) and
// the Keras tutorial's evaluator TF_CONFIG, which needs no cluster.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "distribute/cluster/resolvers/cluster_roles.h"
#include "distribute/cluster/resolvers/run_config.h"
#include "distribute/cluster/resolvers/tfconfig_cluster_resolver.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/ps_roles.h"
#include "framework/config/json.h"
#include "tests/distribute/scoped_environment.h"
#include "tests/support/test_helpers.h"

namespace strata::testing {
namespace {

using distribute::ClusterSpec;
using distribute::RunConfig;
using distribute::TFConfigClusterResolver;
using Jobs = std::map<std::string, std::vector<std::string>>;

// The cluster TensorFlow's multi_worker_util tests use most.
ClusterSpec chief_worker_ps() {
  return ClusterSpec(Jobs{{"chief", {"127.0.0.1:1234"}},
                          {"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}},
                          {"ps", {"127.0.0.1:1926", "127.0.0.1:3141"}}});
}

// ============ multi_worker_util_test.py ============

// NormalizeClusterSpecTest.testDictAsInput / testClusterDefAsInput / testClusterSpecAsInput:
// a dict (here: the job -> list constructor), a ClusterDef (job -> index -> address) and
// TF_CONFIG's JSON make the same cluster.
TEST(MultiWorkerUtil, NormalizeClusterSpecFromEveryForm) {
  const ClusterSpec from_lists = chief_worker_ps();
  const ClusterSpec from_def(std::map<std::string, std::map<int, std::string>>{
      {"chief", {{0, "127.0.0.1:1234"}}},
      {"worker", {{0, "127.0.0.1:8964"}, {1, "127.0.0.1:2333"}}},
      {"ps", {{0, "127.0.0.1:1926"}, {1, "127.0.0.1:3141"}}}});
  const ClusterSpec from_json = ClusterSpec::from_json(
      Json::parse(R"({"chief": ["127.0.0.1:1234"], "worker": ["127.0.0.1:8964", "127.0.0.1:2333"],
                      "ps": ["127.0.0.1:1926", "127.0.0.1:3141"]})"),
      "test");
  EXPECT_EQ(from_lists.as_dict(), from_def.as_dict());
  EXPECT_EQ(from_lists.as_dict(), from_json.as_dict());
  EXPECT_EQ(ClusterSpec::from_json(from_lists.to_json(), "test"), from_lists);
}

// NormalizeClusterSpecTest.testUnexpectedInput: a list is not a cluster.
TEST(MultiWorkerUtil, NormalizeClusterSpecUnexpectedInput) {
  expect_error<ValueError>(
      [] { ClusterSpec::from_json(Json::parse(R"(["127.0.0.1:8964", "127.0.0.1:2333"])"), "t"); },
      {"\"cluster\" must be an object"});
}

// IsChiefTest.testClusterWithChief
TEST(MultiWorkerUtil, IsChiefClusterWithChief) {
  EXPECT_TRUE(distribute::is_chief(chief_worker_ps(), "chief", 0));
  EXPECT_FALSE(distribute::is_chief(chief_worker_ps(), "worker", 0));
}

// IsChiefTest.testClusterWithoutChief
TEST(MultiWorkerUtil, IsChiefClusterWithoutChief) {
  const ClusterSpec spec(Jobs{{"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}}});
  EXPECT_TRUE(distribute::is_chief(spec, "worker", 0));
  EXPECT_FALSE(distribute::is_chief(spec, "worker", 1));
  // TensorFlow: "`task_type` 'chief' not found in cluster_spec."
  expect_error<ValueError>([&] { distribute::is_chief(spec, "chief", 0); },
                           {"not in the cluster", "no job 'chief'"});
  // TensorFlow: "The `task_id` 2 exceeds the maximum id of worker."
  expect_error<ValueError>([&] { distribute::is_chief(spec, "worker", 2); },
                           {"\"index\": 2", "job 'worker' has 2 task(s)"});
}

// IsChiefTest.testEvaluatorIsChief
TEST(MultiWorkerUtil, IsChiefEvaluatorIsChief) {
  const ClusterSpec spec(Jobs{{"chief", {"127.0.0.1:1234"}},
                              {"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}},
                              {"evaluator", {"127.0.0.1:2019"}}});
  EXPECT_TRUE(distribute::is_chief(spec, "evaluator", 0));
}

// NumWorkersTest.testCountWorker
TEST(MultiWorkerUtil, NumWorkersCountWorker) {
  EXPECT_EQ(distribute::worker_count(chief_worker_ps(), "chief"), 3);
  EXPECT_EQ(distribute::worker_count(chief_worker_ps(), "worker"), 3);
}

// NumWorkersTest.testCountEvaluator
TEST(MultiWorkerUtil, NumWorkersCountEvaluator) {
  const ClusterSpec spec(Jobs{{"chief", {"127.0.0.1:1234"}},
                              {"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}},
                              {"evaluator", {"127.0.0.1:7566"}}});
  EXPECT_EQ(distribute::worker_count(spec, "evaluator"), 1);
}

// NumWorkersTest.testTaskTypeNotFound: TensorFlow: "`task_type` 'worker' not found in
// cluster_spec." (Strata used to answer 0.)
TEST(MultiWorkerUtil, NumWorkersTaskTypeNotFound) {
  expect_error<ValueError>([] { distribute::worker_count(ClusterSpec(), "worker"); },
                           {"worker_count", "no job 'worker'"});
  // The same for a chief the cluster lacks.
  expect_error<ValueError>(
      [] { distribute::worker_count(ClusterSpec(Jobs{{"worker", {"h:1"}}}), "chief"); },
      {"no job 'chief'"});
}

// NumWorkersTest.testCountPs: TensorFlow: "Unexpected `task_type` 'ps'".
TEST(MultiWorkerUtil, NumWorkersCountPs) {
  const ClusterSpec spec(
      Jobs{{"chief", {"127.0.0.1:1234"}}, {"ps", {"127.0.0.1:1926", "127.0.0.1:3141"}}});
  expect_error<ValueError>([&] { distribute::worker_count(spec, "ps"); },
                           {"task type 'ps'", "syncs with no workers"});
}

// Strata: an evaluator outside the cluster is a cluster of one (TensorFlow: KeyError).
TEST(MultiWorkerUtil, NumWorkersEvaluatorOutsideTheCluster) {
  EXPECT_EQ(distribute::worker_count(chief_worker_ps(), "evaluator"), 1);
  EXPECT_EQ(distribute::worker_count(ClusterSpec(), "evaluator"), 1);
}

// task_count (used by ParameterServerStrategyV2): 0 for a job the cluster lacks.
TEST(MultiWorkerUtil, TaskCount) {
  EXPECT_EQ(chief_worker_ps().num_tasks("ps"), 2);
  EXPECT_EQ(chief_worker_ps().num_tasks("evaluator"), 0);
  EXPECT_EQ(ClusterSpec().num_tasks("worker"), 0);
}

// IdInClusterTest.testChiefId
TEST(MultiWorkerUtil, IdInClusterChiefId) {
  EXPECT_EQ(distribute::id_in_cluster(chief_worker_ps(), "chief", 0), 0);
}

// IdInClusterTest.testWorkerId
TEST(MultiWorkerUtil, IdInClusterWorkerId) {
  EXPECT_EQ(distribute::id_in_cluster(chief_worker_ps(), "worker", 1), 2);
  const ClusterSpec no_chief(Jobs{{"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}},
                                  {"ps", {"127.0.0.1:1926", "127.0.0.1:3141"}}});
  EXPECT_EQ(distribute::id_in_cluster(no_chief, "worker", 1), 1);
}

// IdInClusterTest.testEvaluatorId
TEST(MultiWorkerUtil, IdInClusterEvaluatorId) {
  const ClusterSpec spec(Jobs{{"chief", {"127.0.0.1:1234"}},
                              {"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}},
                              {"evaluator", {"127.0.0.1:7566"}}});
  EXPECT_EQ(distribute::id_in_cluster(spec, "evaluator", 0), 0);
}

// IdInClusterTest.testPsId: TensorFlow: "There is no id for task_type 'ps'".
TEST(MultiWorkerUtil, IdInClusterPsId) {
  const ClusterSpec spec(Jobs{{"chief", {"127.0.0.1:1234"}}, {"ps", {"127.0.0.1:7566"}}});
  expect_error<ValueError>([&] { distribute::id_in_cluster(spec, "ps", 0); },
                           {"no training id for a 'ps' task"});
}

// IdInClusterTest.testMultipleChiefs: TensorFlow: "There must be at most one 'chief' job."
TEST(MultiWorkerUtil, IdInClusterMultipleChiefs) {
  const ClusterSpec spec(Jobs{{"chief", {"127.0.0.1:8258", "127.0.0.1:7566"}}});
  expect_error<ValueError>([&] { distribute::id_in_cluster(spec, "chief", 0); },
                           {"2 'chief' tasks", "at most one"});
}

// CollectiveLeaderTest.testChiefAsLeader: "/job:chief/replica:0/task:0".
TEST(MultiWorkerUtil, CollectiveLeaderChiefAsLeader) {
  const auto leader = distribute::collective_leader(chief_worker_ps(), "worker", 0);
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ(leader->type, "chief");
  EXPECT_EQ(leader->index, 0);
}

// CollectiveLeaderTest.testWorkerAsLeader: "/job:worker/replica:0/task:0".
TEST(MultiWorkerUtil, CollectiveLeaderWorkerAsLeader) {
  const ClusterSpec spec(Jobs{{"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}},
                              {"ps", {"127.0.0.1:1926", "127.0.0.1:3141"}}});
  const auto leader = distribute::collective_leader(spec, "worker", 1);
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ(leader->type, "worker");
  EXPECT_EQ(leader->index, 0);
}

// CollectiveLeaderTest.testLeaderForEvaluator: "" (the evaluator runs alone).
TEST(MultiWorkerUtil, CollectiveLeaderForEvaluator) {
  const ClusterSpec spec(Jobs{{"chief", {"127.0.0.1:1234"}},
                              {"worker", {"127.0.0.1:8964", "127.0.0.1:2333"}},
                              {"ps", {"127.0.0.1:1926", "127.0.0.1:3141"}},
                              {"evaluator", {"127.0.0.1:2019"}}});
  EXPECT_EQ(distribute::collective_leader(spec, "evaluator", 0), std::nullopt);
}

// CollectiveLeaderTest.testLocalLeader: "" for an empty cluster (task type None: "").
TEST(MultiWorkerUtil, CollectiveLeaderLocalLeader) {
  EXPECT_EQ(distribute::collective_leader(ClusterSpec(), "", 0), std::nullopt);
}

// ClusterSpecValidationTest.testEvaluatorNotInCluster: every task of the cluster, and an
// evaluator the cluster does not list, validates. (Strata used to refuse the evaluator.)
TEST(MultiWorkerUtil, ClusterSpecValidationEvaluatorNotInCluster) {
  const ClusterSpec spec = chief_worker_ps();
  distribute::validate_task(spec, "chief", 0, "test");
  distribute::validate_task(spec, "worker", 0, "test");
  distribute::validate_task(spec, "ps", 0, "test");
  distribute::validate_task(spec, "evaluator", 0, "test");
  EXPECT_TRUE(distribute::is_chief(spec, "evaluator", 0));
  EXPECT_EQ(distribute::id_in_cluster(spec, "evaluator", 0), 0);
}

// ClusterSpecValidationTest.testWorkerNotInCluster
TEST(MultiWorkerUtil, ClusterSpecValidationWorkerNotInCluster) {
  const ClusterSpec spec(
      Jobs{{"chief", {"127.0.0.1:1234"}}, {"ps", {"127.0.0.1:1926", "127.0.0.1:3141"}}});
  distribute::validate_task(spec, "evaluator", 0, "test");
  // TensorFlow: "`task_type` 'worker' not found in cluster_spec."
  expect_error<ValueError>([&] { distribute::validate_task(spec, "worker", 0, "test"); },
                           {"not in the cluster", "no job 'worker'"});
}

// _validate_cluster_spec: "Disallowed task type found in cluster spec" for any other job, and
// "Unrecognized task_type" for any other task type, and at most one evaluator. (Strata used to
// accept other jobs.) Strata also allows tf.estimator's legacy "master".
TEST(MultiWorkerUtil, ValidateClusterSpecDisallowedTaskTypes) {
  const ClusterSpec other_job(Jobs{{"chief", {"h:1"}}, {"worker", {"h:2"}}, {"driver", {"h:3"}}});
  expect_error<ValueError>([&] { distribute::validate_task(other_job, "worker", 0, "test"); },
                           {"test", "job 'driver'", "not a task type", "\"chief\", \"worker\""});
  expect_error<ValueError>([&] { distribute::validate_cluster(other_job, "test"); },
                           {"job 'driver'"});
  expect_error<ValueError>([] { distribute::validate_task(chief_worker_ps(), "foobar", 0, "t"); },
                           {"unknown type 'foobar'"});
  const ClusterSpec two_evaluators(Jobs{{"worker", {"h:1"}}, {"evaluator", {"h:2", "h:3"}}});
  expect_error<ValueError>([&] { distribute::validate_task(two_evaluators, "worker", 0, "t"); },
                           {"2 'evaluator' tasks", "at most one"});
  distribute::validate_task(ClusterSpec(Jobs{{"master", {"h:1"}}, {"worker", {"h:2"}}}),
                            "master", 0, "test");
}

// ============ tf.estimator run_config_test.py: RunConfigDistributedSettingTest ============

// TF_CONFIG for the scope, then RunConfig's answer.
RunConfig run_config_with(const std::string& tf_config) {
  ScopedEnvironment env{{"TF_CONFIG", tf_config}};
  return RunConfig::from(TFConfigClusterResolver());
}

void expect_run_config_error(const std::string& tf_config,
                             std::initializer_list<std::string_view> message) {
  ScopedEnvironment env{{"TF_CONFIG", tf_config}};
  expect_error<ValueError>([] { RunConfig::from(TFConfigClusterResolver()); }, message);
}

// _assert_distributed_properties, less evaluation_master (Strata has no sessions).
void expect_distributed_properties(const RunConfig& c, const std::string& cluster_json,
                                   const std::string& task_type, int task_id,
                                   const std::string& master, bool is_chief,
                                   int num_worker_replicas, int num_ps_replicas) {
  EXPECT_EQ(c.cluster_spec, ClusterSpec::from_json(Json::parse(cluster_json), "expected"));
  EXPECT_EQ(c.task_type, task_type);
  EXPECT_EQ(c.task_id, task_id);
  EXPECT_EQ(c.master, master);
  EXPECT_EQ(c.is_chief, is_chief);
  EXPECT_EQ(c.num_worker_replicas, num_worker_replicas);
  EXPECT_EQ(c.num_ps_replicas, num_ps_replicas);
}

// The cluster of the estimator tests. Strata: "host0:0" is "host0:10" (port 0 is refused).
const char* kEstimatorCluster = R"({"chief": ["host0:10"], "ps": ["host1:1", "host2:2"],
                                    "worker": ["host3:3", "host4:4", "host5:5"]})";

std::string tf_config(const std::string& cluster, const std::string& type, int index) {
  return R"({"cluster": )" + cluster + R"(, "task": {"type": ")" + type +
         R"(", "index": )" + std::to_string(index) + "}}";
}

// test_default_values
TEST(EstimatorRunConfig, DefaultValues) {
  ScopedEnvironment env{{"TF_CONFIG", std::nullopt}};
  expect_distributed_properties(RunConfig::from(TFConfigClusterResolver()), "{}", "worker", 0, "",
                                true, 1, 0);
}

// test_tf_config_for_local
TEST(EstimatorRunConfig, TfConfigForLocal) {
  const RunConfig c = run_config_with(R"({"task": {"type": "worker", "index": 0}})");
  expect_distributed_properties(c, "{}", "worker", 0, "", true, 1, 0);
  EXPECT_EQ(c.global_id_in_cluster, 0);
}

// test_session_master_for_local
TEST(EstimatorRunConfig, SessionMasterForLocal) {
  expect_distributed_properties(run_config_with(R"({"session_master": "_my_master"})"), "{}",
                                "worker", 0, "_my_master", true, 1, 0);
}

// test_invalid_task_type_for_local: 'If "cluster" is not set in TF_CONFIG, task type must be
// WORKER.'
TEST(EstimatorRunConfig, InvalidTaskTypeForLocal) {
  expect_run_config_error(R"({"task": {"type": "chief", "index": 0}})",
                          {"no \"cluster\"", "must be worker 0", "it is chief 0"});
}

// test_invalid_task_index_for_local: 'If "cluster" is not set in TF_CONFIG, task index must be 0.'
TEST(EstimatorRunConfig, InvalidTaskIndexForLocal) {
  expect_run_config_error(R"({"task": {"type": "worker", "index": 1}})",
                          {"no \"cluster\"", "must be worker 0", "it is worker 1"});
}

// test_chief_tf_config
TEST(EstimatorRunConfig, ChiefTfConfig) {
  expect_distributed_properties(run_config_with(tf_config(kEstimatorCluster, "chief", 0)),
                                kEstimatorCluster, "chief", 0, "grpc://host0:10", true, 4, 2);
}

// test_session_master_from_single_node_tf_config
TEST(EstimatorRunConfig, SessionMasterFromSingleNodeTfConfig) {
  const RunConfig c = run_config_with(R"({"cluster": {"chief": ["host0:10"]},
      "task": {"type": "chief", "index": 0}, "session_master": "_my_master"})");
  EXPECT_EQ(c.master, "_my_master");
}

// test_session_master_from_multiple_nodes_tf_config
TEST(EstimatorRunConfig, SessionMasterFromMultipleNodesTfConfig) {
  const RunConfig c = run_config_with(R"({"cluster": {"chief": ["host0:10"],
      "ps": ["host1:1", "host2:2"]}, "task": {"type": "chief", "index": 0},
      "session_master": "_my_master"})");
  EXPECT_EQ(c.master, "_my_master");
}

// test_fail_with_multiple_chief_nodes: 'The "cluster" in TF_CONFIG must have only one "chief"
// node.' Strata: the second chief is "host6:6" (TensorFlow's "host:6:6" is no address).
TEST(EstimatorRunConfig, FailWithMultipleChiefNodes) {
  expect_run_config_error(
      R"({"cluster": {"chief": ["host0:10", "host6:6"], "worker": ["host3:3", "host4:4", "host5:5"]}})",
      {"2 'chief' tasks", "at most one"});
}

// test_fail_with_missing_chief_node. Strata: worker 0 is the chief of a cluster without one
// (multi_worker_util and Keras), where tf.estimator says 'it must have one "chief" node'; the
// task must still be named.
TEST(EstimatorRunConfig, MissingChiefNodeMakesWorker0TheChief) {
  const std::string cluster = R"({"worker": ["host3:3", "host4:4", "host5:5"]})";
  expect_run_config_error(R"({"cluster": )" + cluster + "}", {"must give", "\"type\""});
  const RunConfig worker0 = run_config_with(tf_config(cluster, "worker", 0));
  expect_distributed_properties(worker0, cluster, "worker", 0, "grpc://host3:3", true, 3, 0);
  EXPECT_EQ(worker0.global_id_in_cluster, 0);
  EXPECT_FALSE(run_config_with(tf_config(cluster, "worker", 1)).is_chief);
}

// test_single_chief_node
TEST(EstimatorRunConfig, SingleChiefNode) {
  expect_distributed_properties(
      run_config_with(tf_config(R"({"chief": ["host0:10"]})", "chief", 0)),
      R"({"chief": ["host0:10"]})", "chief", 0, "", true, 1, 0);
}

// test_fail_with_missing_task_type_for_distributed: 'If "cluster" is set in TF_CONFIG, task type
// must be set.'
TEST(EstimatorRunConfig, FailWithMissingTaskTypeForDistributed) {
  expect_run_config_error(R"({"cluster": {"chief": ["host3:3"]}})",
                          {"has a \"cluster\"", "must give", "\"type\""});
}

// test_fail_with_missing_task_index_for_distributed: 'If "cluster" is set in TF_CONFIG, task
// index must be set.'
TEST(EstimatorRunConfig, FailWithMissingTaskIndexForDistributed) {
  expect_run_config_error(R"({"cluster": {"chief": ["host3:3"]}, "task": {"type": "chief"}})",
                          {"has a \"cluster\"", "must give", "\"index\""});
}

// test_fail_with_index_is_too_large: "is not a valid task_id"
TEST(EstimatorRunConfig, FailWithIndexIsTooLarge) {
  expect_run_config_error(tf_config(R"({"chief": ["host3:3"]})", "chief", 1),
                          {"\"index\": 1", "not in the cluster", "indices [0]"});
}

// test_fail_with_invalid_task_index: "Task index must be non-negative number."
TEST(EstimatorRunConfig, FailWithInvalidTaskIndex) {
  expect_run_config_error(tf_config(R"({"chief": ["host3:3"]})", "chief", -1),
                          {"\"index\" must be a non-negative integer", "-1"});
}

// test_fail_with_invalid_task_type: "is not a valid task_type"
TEST(EstimatorRunConfig, FailWithInvalidTaskType) {
  expect_run_config_error(tf_config(R"({"chief": ["host3:3"]})", "worker", 0),
                          {"not in the cluster", "no job 'worker'"});
}

// test_worker_tf_config
TEST(EstimatorRunConfig, WorkerTfConfig) {
  expect_distributed_properties(run_config_with(tf_config(kEstimatorCluster, "worker", 1)),
                                kEstimatorCluster, "worker", 1, "grpc://host4:4", false, 4, 2);
}

// test_ps_tf_config
TEST(EstimatorRunConfig, PsTfConfig) {
  expect_distributed_properties(run_config_with(tf_config(kEstimatorCluster, "ps", 0)),
                                kEstimatorCluster, "ps", 0, "grpc://host1:1", false, 4, 2);
}

// test_evaluator_tf_config: outside the training cluster, never the chief, no global id.
TEST(EstimatorRunConfig, EvaluatorTfConfig) {
  const RunConfig c = run_config_with(tf_config(kEstimatorCluster, "evaluator", 12));
  expect_distributed_properties(c, "{}", "evaluator", 12, "", false, 0, 0);
  EXPECT_EQ(c.global_id_in_cluster, std::nullopt);
}

// test_fail_with_invalid_task_index_for_evaluator: "Task index must be non-negative number."
TEST(EstimatorRunConfig, FailWithInvalidTaskIndexForEvaluator) {
  expect_run_config_error(tf_config(R"({"chief": ["host3:3"]})", "evaluator", -1),
                          {"\"index\" must be a non-negative integer"});
}

// test_global_id_in_cluster_for_chief / _for_worker / _for_ps
TEST(EstimatorRunConfig, GlobalIdInCluster) {
  const std::string cluster = R"({"chief": ["host0:10"], "worker": ["host3:3", "host4:4",
      "host5:5"], "ps": ["host6:3", "host7:4", "host8:5"]})";
  EXPECT_EQ(run_config_with(tf_config(cluster, "chief", 0)).global_id_in_cluster, 0);
  EXPECT_EQ(run_config_with(tf_config(cluster, "worker", 2)).global_id_in_cluster, 3);
  EXPECT_EQ(run_config_with(tf_config(cluster, "ps", 1)).global_id_in_cluster, 5);
}

// test_global_id_in_cluster_for_multipe_worker_types. Strata: a job "other_type" is an error
// (multi_worker_util's "Disallowed task type"); tf.estimator numbers it (id 2). The ordering
// rule (other jobs alphabetically between the chief and ps) shows with the evaluator, the one
// other job Strata allows: it comes before "worker".
TEST(EstimatorRunConfig, GlobalIdInClusterForMultipleWorkerTypes) {
  expect_run_config_error(
      tf_config(R"({"chief": ["host0:10"], "worker": ["host3:3", "host4:4", "host5:5"],
                    "other_type": ["host3:1", "host4:2"], "ps": ["host6:3", "host7:4", "host8:5"]})",
                "other_type", 1),
      {"job 'other_type'", "not a task type"});
  const std::string cluster = R"({"chief": ["host0:10"], "worker": ["host3:3", "host4:4"],
      "evaluator": ["host9:9"], "ps": ["host6:3"]})";
  EXPECT_EQ(run_config_with(tf_config(cluster, "worker", 1)).global_id_in_cluster, 3);
  EXPECT_EQ(run_config_with(tf_config(cluster, "ps", 0)).global_id_in_cluster, 4);
}

// ============ run_config_test.py: RunConfigDistributedSettingWithMasterTest ============

const char* kMasterCluster = R"({"master": ["host0:10"], "ps": ["host1:1", "host2:2"],
                                 "worker": ["host3:3", "host4:4", "host5:5"]})";

// test_invalid_task_type_for_local (master)
TEST(EstimatorRunConfigWithMaster, InvalidTaskTypeForLocal) {
  expect_run_config_error(R"({"task": {"type": "master", "index": 0}})",
                          {"no \"cluster\"", "must be worker 0", "it is master 0"});
}

// test_master_node
TEST(EstimatorRunConfigWithMaster, MasterNode) {
  expect_distributed_properties(run_config_with(tf_config(kMasterCluster, "master", 0)),
                                kMasterCluster, "master", 0, "grpc://host0:10", true, 4, 2);
}

// test_session_master_in_single_node_tf_config / _in_multiple_nodes_tf_config
TEST(EstimatorRunConfigWithMaster, SessionMaster) {
  EXPECT_EQ(run_config_with(R"({"cluster": {"master": ["host0:10"]},
      "task": {"type": "master", "index": 0}, "session_master": "_my_master"})").master,
            "_my_master");
  EXPECT_EQ(run_config_with(R"({"cluster": {"master": ["host0:10"], "ps": ["host1:1"]},
      "task": {"type": "master", "index": 0}, "session_master": "_my_master"})").master,
            "_my_master");
}

// test_fail_with_multiple_master_nodes: 'The "cluster" in TF_CONFIG must have only one "master"
// node.' (Strata: "host6:6" for "host:6:6".)
TEST(EstimatorRunConfigWithMaster, FailWithMultipleMasterNodes) {
  expect_run_config_error(
      R"({"cluster": {"master": ["host0:10", "host6:6"], "worker": ["host3:3", "host4:4", "host5:5"]}})",
      {"2 'master' tasks", "at most one"});
}

// test_single_master_node
TEST(EstimatorRunConfigWithMaster, SingleMasterNode) {
  expect_distributed_properties(
      run_config_with(tf_config(R"({"master": ["host0:10"]})", "master", 0)),
      R"({"master": ["host0:10"]})", "master", 0, "", true, 1, 0);
}

// test_fail_with_missing_task_type_for_distributed / _task_index_ (master)
TEST(EstimatorRunConfigWithMaster, FailWithMissingTaskTypeOrIndex) {
  expect_run_config_error(R"({"cluster": {"master": ["host3:3"]}})", {"must give", "\"type\""});
  expect_run_config_error(R"({"cluster": {"master": ["host3:3"]}, "task": {"type": "master"}})",
                          {"must give", "\"index\""});
}

// test_fail_with_index_is_too_large / test_fail_with_invalid_task_index /
// test_fail_with_invalid_task_type (master)
TEST(EstimatorRunConfigWithMaster, FailWithInvalidTask) {
  expect_run_config_error(tf_config(R"({"master": ["host3:3"]})", "master", 1),
                          {"\"index\": 1", "not in the cluster"});
  expect_run_config_error(tf_config(R"({"master": ["host3:3"]})", "master", -1),
                          {"\"index\" must be a non-negative integer"});
  expect_run_config_error(tf_config(R"({"master": ["host3:3"]})", "worker", 0),
                          {"no job 'worker'"});
}

// test_worker_tf_config (master)
TEST(EstimatorRunConfigWithMaster, WorkerTfConfig) {
  expect_distributed_properties(run_config_with(tf_config(kMasterCluster, "worker", 1)),
                                kMasterCluster, "worker", 1, "grpc://host4:4", false, 4, 2);
}

// test_ps_tf_config (master)
TEST(EstimatorRunConfigWithMaster, PsTfConfig) {
  expect_distributed_properties(run_config_with(tf_config(kMasterCluster, "ps", 0)),
                                kMasterCluster, "ps", 0, "grpc://host1:1", false, 4, 2);
}

// test_fail_with_evaluator: 'If `master` node exists in `cluster`, task_type `evaluator` is not
// supported.'
TEST(EstimatorRunConfigWithMaster, FailWithEvaluator) {
  expect_run_config_error(tf_config(kMasterCluster, "evaluator", 1),
                          {"evaluator", "legacy 'master'", "rename \"master\" to \"chief\""});
}

// test_fail_with_chief: 'If `master` node exists in `cluster`, job `chief` is not supported.'
// (Strata also refuses the three chiefs, which are checked in the same place.)
TEST(EstimatorRunConfigWithMaster, FailWithChief) {
  expect_run_config_error(
      tf_config(R"({"master": ["host0:10"], "ps": ["host1:1", "host2:2"], "chief": ["host3:3"]})",
                "ps", 1),
      {"both a 'chief' and a 'master'"});
}

// test_global_id_in_cluster_for_master / _for_worker / _for_ps (master)
TEST(EstimatorRunConfigWithMaster, GlobalIdInCluster) {
  const std::string cluster = R"({"master": ["host0:10"], "worker": ["host3:3", "host4:4",
      "host5:5"], "ps": ["host6:3", "host7:4", "host8:5"]})";
  EXPECT_EQ(run_config_with(tf_config(cluster, "master", 0)).global_id_in_cluster, 0);
  EXPECT_EQ(run_config_with(tf_config(cluster, "worker", 2)).global_id_in_cluster, 3);
  EXPECT_EQ(run_config_with(tf_config(cluster, "ps", 1)).global_id_in_cluster, 5);
}

// contrib.learn's run_config_test (TensorFlow 1): test_is_chief_from_cloud_tf_config and
// test_is_chief_from_noncloud_tf_config. Strata follows tf.estimator: "environment" is read but
// the master is the chief whatever it says (contrib.learn made worker 0 the chief outside
// "cloud").
TEST(EstimatorRunConfigWithMaster, EnvironmentDoesNotChooseTheChief) {
  for (const char* environment : {"cloud", "random"}) {
    SCOPED_TRACE(environment);
    const std::string cluster = R"({"ps": ["host1:1", "host2:2"], "master": ["host3:3"],
        "worker": ["host4:4", "host5:5", "host6:6"]})";
    const auto with = [&](const std::string& type) {
      return run_config_with(R"({"cluster": )" + cluster + R"(, "task": {"type": ")" + type +
                             R"(", "index": 0}, "environment": ")" + environment + "\"}");
    };
    EXPECT_TRUE(with("master").is_chief);
    EXPECT_EQ(with("master").environment, environment);
    EXPECT_FALSE(with("worker").is_chief);
  }
}

// ============ parameter_server_strategy_v2_test.py: ClusterTypeNameTest ============

// multi_worker_test_base.create_cluster_spec(num_workers, num_ps, has_chief), with fixed
// loopback ports (nothing listens: every case fails before a connection).
Jobs create_cluster_spec(int num_workers, int num_ps, bool has_chief) {
  Jobs jobs;
  int port = 21000;
  if (has_chief) jobs["chief"] = {"localhost:" + std::to_string(port++)};
  for (int i = 0; i < num_workers; ++i) jobs["worker"].push_back("localhost:" + std::to_string(port++));
  for (int i = 0; i < num_ps; ++i) jobs["ps"].push_back("localhost:" + std::to_string(port++));
  return jobs;
}

using distribute::ParameterServerStrategy;
using distribute::SimpleClusterResolver;
using distribute::SimpleClusterResolverOptions;

// The PS start-up checks happen both where the strategy is made from a resolver and where a task
// of an app learns its role (parameter_server_role): each case is checked through both.
void expect_ps_cluster_error(const SimpleClusterResolver& resolver,
                             std::initializer_list<std::string_view> message) {
  expect_error<ValueError>([&] { ParameterServerStrategy strategy(resolver); }, message);
  expect_error<ValueError>([&] { distribute::validate_parameter_server_cluster(resolver); },
                           message);
  if (resolver.task_type() && resolver.task_id()) {
    expect_error<ValueError>([&] { distribute::parameter_server_role(resolver); }, message);
  }
}

// ClusterTypeNameTest.testArbitraryJobName: "Disallowed task type found in"
TEST(ParameterServerClusterTypeName, ArbitraryJobName) {
  Jobs jobs = create_cluster_spec(1, 1, true);
  jobs["some_arbitrary_name"] = {"localhost:21100"};
  expect_ps_cluster_error(
      SimpleClusterResolver(ClusterSpec(jobs), SimpleClusterResolverOptions().rpc_layer("grpc")),
      {"job 'some_arbitrary_name'", "not a task type"});
  expect_ps_cluster_error(SimpleClusterResolver(ClusterSpec(jobs), SimpleClusterResolverOptions()
                                                                       .task_type("chief")
                                                                       .task_id(0)),
                          {"job 'some_arbitrary_name'"});
}

// ClusterTypeNameTest.testArbitraryCurrentTaskType: "Unrecognized task_type: foobar"
TEST(ParameterServerClusterTypeName, ArbitraryCurrentTaskType) {
  expect_ps_cluster_error(
      SimpleClusterResolver(ClusterSpec(create_cluster_spec(1, 1, true)),
                            SimpleClusterResolverOptions().rpc_layer("grpc").task_type("foobar").task_id(0)),
      {"unknown type 'foobar'"});
}

// ClusterTypeNameTest.testMoreThanOneChief: "There must be at most one 'chief' job." (Strata's
// PS start-up path used to let the chief 1 of three coordinate.)
TEST(ParameterServerClusterTypeName, MoreThanOneChief) {
  Jobs jobs = create_cluster_spec(1, 1, false);
  jobs["chief"] = {"localhost:21101", "localhost:21102", "localhost:21103"};
  expect_ps_cluster_error(
      SimpleClusterResolver(ClusterSpec(jobs),
                            SimpleClusterResolverOptions().rpc_layer("grpc").task_type("chief").task_id(1)),
      {"3 'chief' tasks", "at most one"});
}

// ClusterTypeNameTest.testLessThanOneWorker: "There must be at least one worker."
TEST(ParameterServerClusterTypeName, LessThanOneWorker) {
  expect_ps_cluster_error(
      SimpleClusterResolver(ClusterSpec(create_cluster_spec(0, 1, true)),
                            SimpleClusterResolverOptions().rpc_layer("grpc").task_type("ps").task_id(0)),
      {"no 'worker' task", "at least one"});
}

// ClusterTypeNameTest.testLessThanOnePs: "There must be at least one ps."
TEST(ParameterServerClusterTypeName, LessThanOnePs) {
  expect_ps_cluster_error(
      SimpleClusterResolver(ClusterSpec(create_cluster_spec(1, 0, true)),
                            SimpleClusterResolverOptions().rpc_layer("grpc").task_type("worker").task_id(0)),
      {"no 'ps' task", "at least one"});
}

// _verify_args_and_config: "Cluster spec must be non-empty".
TEST(ParameterServerClusterTypeName, EmptyClusterSpec) {
  expect_ps_cluster_error(SimpleClusterResolver(ClusterSpec()), {"the cluster is empty"});
}

// ============ the Keras tutorial's evaluator: "The cluster part in the evaluator's TF_CONFIG is
// optional" ============

// The three forms of the evaluator's TF_CONFIG: the whole cluster, only itself, none.
const std::vector<std::string>& evaluator_tf_configs() {
  static const std::vector<std::string> forms{
      R"({"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                      "ps": ["host3:2222"], "evaluator": ["host7:2222"]},
          "task": {"type": "evaluator", "index": 0}})",
      R"({"cluster": {"evaluator": ["host7:2222"]}, "task": {"type": "evaluator", "index": 0}})",
      R"({"task": {"type": "evaluator", "index": 0}})"};
  return forms;
}

// Every form validates, is the evaluator in a parameter-server job (Strata used to answer that
// the cluster has no 'ps' job), and is outside the training cluster for RunConfig.
TEST(TutorialEvaluator, EveryTfConfigFormIsTheEvaluator) {
  for (const std::string& form : evaluator_tf_configs()) {
    SCOPED_TRACE(form);
    ScopedEnvironment env{{"TF_CONFIG", form}};
    const TFConfigClusterResolver resolver;
    resolver.validate();
    const auto role = distribute::parameter_server_role(resolver);
    EXPECT_EQ(role.kind, distribute::ParameterServerRole::Kind::kEvaluator);
    EXPECT_EQ(role.task_index, 0);
    const RunConfig config = RunConfig::from(resolver);
    EXPECT_EQ(config.task_type, "evaluator");
    EXPECT_FALSE(config.is_chief);
    EXPECT_EQ(config.num_worker_replicas, 0);
  }
}

// The evaluator is still checked: its index within a listed evaluator job, no second evaluator,
// no other job.
TEST(TutorialEvaluator, AnEvaluatorStillValidates) {
  const std::vector<std::pair<std::string, std::vector<std::string_view>>> cases{
      {R"({"cluster": {"evaluator": ["host7:2222"]}, "task": {"type": "evaluator", "index": 1}})",
       {"\"index\": 1", "not in the cluster"}},
      {R"({"cluster": {"evaluator": ["h7:1", "h8:1"]}, "task": {"type": "evaluator", "index": 0}})",
       {"2 'evaluator' tasks"}},
      {R"({"cluster": {"evaluator": ["h7:1"], "tensorboard": ["h8:1"]},
           "task": {"type": "evaluator", "index": 0}})",
       {"job 'tensorboard'"}},
      {R"({"cluster": {"evaluator": ["h7:0"]}, "task": {"type": "evaluator", "index": 0}})",
       {"evaluator 0", "port 0"}}};
  for (const auto& [form, message] : cases) {
    SCOPED_TRACE(form);
    ScopedEnvironment env{{"TF_CONFIG", form}};
    for (auto check : {+[] { TFConfigClusterResolver().validate(); },
                       +[] { distribute::parameter_server_role(TFConfigClusterResolver()); }}) {
      try {
        check();
        ADD_FAILURE() << "expected a ValueError";
      } catch (const ValueError& e) {
        for (std::string_view part : message) {
          EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
      }
    }
  }
}

// ============ addresses (cluster_spec.h) ============

// Port 0 asks a server for any free port, which its peers cannot know: an error naming the task
// and the address (Strata used to accept it; the coordinator then bound a random port that the
// workers dialled as ":0").
TEST(ClusterAddresses, PortZeroIsAnErrorNamingTheTask) {
  ScopedEnvironment env{{"TF_CONFIG", R"({"cluster": {"chief": ["localhost:20000"],
      "worker": ["localhost:20001", "localhost:0"]}, "task": {"type": "chief", "index": 0}})"}};
  expect_error<ValueError>([] { TFConfigClusterResolver().cluster_spec(); },
                           {"TF_CONFIG", "task worker 1", "\"localhost:0\"", "port 0",
                            "[1, 65535]"});
  expect_error<ValueError>([] { ClusterSpec(Jobs{{"ps", {"[::1]:0"}}}); }, {"ps 0", "port 0"});
}

// "localhost:p", "127.0.0.1:p", "[::1]:p" and "LOCALHOST:p" are one address (Strata used to take
// the first two as two).
TEST(ClusterAddresses, LoopbackSpellingsAreOneAddress) {
  const std::vector<std::string> same{"localhost:20000", "127.0.0.1:20000", "[::1]:20000",
                                      "LOCALHOST:20000", "localhost.:20000",
                                      "[0:0:0:0:0:0:0:1]:20000", "w0.localhost:20000",
                                      "127.0.0.1.:20000"};
  for (size_t i = 0; i < same.size(); ++i) {
    for (size_t j = 0; j < same.size(); ++j) {
      if (i == j) continue;
      SCOPED_TRACE(same[i] + " and " + same[j]);
      expect_error<ValueError>(
          [&] { ClusterSpec(Jobs{{"chief", {same[i]}}, {"worker", {same[j]}}}); },
          {"tasks chief 0", "worker 0", "the same address", "loopback"});
    }
  }
  // Host names ignore case; other ports, and other hosts, are other addresses.
  expect_error<ValueError>([] { ClusterSpec(Jobs{{"worker", {"Host0:1", "host0:1"}}}); },
                           {"worker 0", "worker 1", "ignore case"});
  EXPECT_NO_THROW(ClusterSpec(Jobs{{"worker", {"localhost:1", "127.0.0.1:2", "[::1]:3",
                                               "127.0.0.2:1", "host0:1", "10.0.0.1:1"}}}));
}

// Ports outside [1, 65535], empty hosts, hosts that are no host: errors naming the task.
TEST(ClusterAddresses, MalformedAddressesAreErrorsNamingTheTask) {
  const std::vector<std::pair<std::string, std::vector<std::string_view>>> cases{
      {"localhost:65536", {"\"65536\"", "[1, 65535]"}},
      {"localhost:-1", {"\"-1\"", "[1, 65535]"}},
      {"localhost:", {"\"\"", "[1, 65535]"}},
      {"localhost:22x", {"\"22x\""}},
      {":2222", {"has no host"}},
      {"[]:2222", {"no host"}},
      {"localhost", {"has no port"}},
      {"::1:2222", {"ambiguous", "brackets"}},
      {"[not-ipv6]:2222", {"not an IPv6 address"}},
      {"grpc://host0:2222", {"scheme (\"grpc://\")", "rpc_layer"}},
      {"host/0:2222", {"'/'"}},
      {"host 0:2222", {"a space"}},
      {"host:6:6", {"ambiguous"}}};
  for (const auto& [address, message] : cases) {
    SCOPED_TRACE(address);
    try {
      ClusterSpec(Jobs{{"chief", {"h0:1"}}, {"worker", {"h1:1", address}}});
      ADD_FAILURE() << "expected a ValueError";
    } catch (const ValueError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("task worker 1"), std::string::npos) << what;
      for (std::string_view part : message) EXPECT_NE(what.find(part), std::string::npos) << what;
    }
  }
  // Valid forms: names with '-', '_' and '.', IPv4, IPv6 (with a zone), port 65535.
  EXPECT_NO_THROW(ClusterSpec(Jobs{{"worker", {"worker-0.svc_1.cluster.local:1", "10.1.2.3:65535",
                                               "[fe80::1%eth0]:2222", "[2001:db8::7]:2222"}}}));
}

}  // namespace
}  // namespace strata::testing
