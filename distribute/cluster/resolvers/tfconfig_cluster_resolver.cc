#include "distribute/cluster/resolvers/tfconfig_cluster_resolver.h"

#include <cstdlib>

#include "distribute/cluster/resolvers/cluster_roles.h"
#include "framework/config/json.h"
#include "framework/core/error.h"

namespace strata::distribute {
namespace {

constexpr const char* kSource = "TF_CONFIG";

// TF_CONFIG parsed; an empty object when unset or empty.
Json load_tf_config() {
  const char* text = std::getenv("TF_CONFIG");
  if (text == nullptr || std::string(text).find_first_not_of(" \t\r\n") == std::string::npos) {
    return Json::object();
  }
  Json config;
  try {
    config = Json::parse(text);
  } catch (const Error& e) {
    throw ValueError(std::string("TF_CONFIG is not valid JSON (") + e.what() +
                     "); it should look like {\"cluster\": {\"worker\": [\"host0:2222\", "
                     "\"host1:2222\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}");
  }
  if (!config.is_object()) {
    throw ValueError("TF_CONFIG must be a JSON object with \"cluster\" and \"task\"; got " +
                     config.dump());
  }
  return config;
}

// TF_CONFIG's "task" object (empty when absent).
Json task_info(const Json& config) {
  const Json task = config.get("task", Json::object());
  if (!task.is_object()) {
    throw ValueError("TF_CONFIG: \"task\" must be an object such as {\"type\": \"worker\", "
                     "\"index\": 0}; got " + task.dump());
  }
  return task;
}

std::optional<std::string> string_entry(const Json& config, const char* key) {
  if (!config.contains(key) || config.at(key).is_null()) return std::nullopt;
  const Json v = config.at(key);
  if (!v.is_string()) {
    throw ValueError(std::string("TF_CONFIG: \"") + key + "\" must be a string; got " + v.dump());
  }
  return v.as_string();
}

}  // namespace

TFConfigClusterResolver::TFConfigClusterResolver(TFConfigClusterResolverOptions overrides)
    : overrides_(std::move(overrides)) {}

ClusterSpec TFConfigClusterResolver::cluster_spec() const {
  const Json config = load_tf_config();
  if (!config.contains("cluster")) return ClusterSpec();
  return ClusterSpec::from_json(config.at("cluster"), kSource);
}

std::optional<std::string> TFConfigClusterResolver::task_type() const {
  if (overrides_.task_type_) return overrides_.task_type_;
  const Json task = task_info(load_tf_config());
  if (!task.contains("type") || task.at("type").is_null()) return std::nullopt;
  const Json type = task.at("type");
  return type.is_string() ? type.as_string() : type.dump();  // TensorFlow's str(type)
}

std::optional<int> TFConfigClusterResolver::task_id() const {
  if (overrides_.task_id_) return overrides_.task_id_;
  const Json task = task_info(load_tf_config());
  if (!task.contains("index") || task.at("index").is_null()) return std::nullopt;
  const Json index = task.at("index");
  const std::optional<int> id =
      index.is_string() ? parse_count(index.as_string())
                        : index.is_number() ? parse_count(index.dump()) : std::nullopt;
  if (!id) {
    throw ValueError("TF_CONFIG: \"task\": \"index\" must be a non-negative integer (or a string "
                     "of digits); got " + index.dump());
  }
  return id;
}

std::string TFConfigClusterResolver::rpc_layer() const {
  if (overrides_.rpc_layer_) return *overrides_.rpc_layer_;
  return string_entry(load_tf_config(), "rpc_layer").value_or("");
}

std::string TFConfigClusterResolver::environment() const {
  if (overrides_.environment_) return *overrides_.environment_;
  return string_entry(load_tf_config(), "environment").value_or("");
}

std::string TFConfigClusterResolver::master(const std::optional<std::string>& task_type,
                                            const std::optional<int>& task_id,
                                            const std::optional<std::string>& rpc_layer) const {
  if (auto session_master = string_entry(load_tf_config(), "session_master")) {
    return *session_master;
  }
  const ClusterSpec spec = cluster_spec();
  const std::vector<std::string> jobs = spec.jobs();
  if (jobs.empty() || (jobs.size() == 1 && spec.num_tasks(jobs[0]) == 1)) return "";
  const std::optional<std::string> type = task_type ? task_type : this->task_type();
  const std::optional<int> id = task_id ? task_id : this->task_id();
  if (!type || !id) {
    throw ValueError("TFConfigClusterResolver.master: this task's type and index are unknown "
                     "(TF_CONFIG has no \"task\"); set TF_CONFIG's \"task\" or pass task_type "
                     "and task_id");
  }
  return format_master_url(spec.task_address(*type, *id), rpc_layer ? *rpc_layer : this->rpc_layer());
}

void TFConfigClusterResolver::validate() const {
  const ClusterSpec spec = cluster_spec();
  const std::optional<std::string> type = task_type();
  const std::optional<int> id = task_id();
  if (!type || !id) {
    throw ValueError("TF_CONFIG: \"task\" needs a \"type\" and an \"index\", e.g. {\"type\": "
                     "\"worker\", \"index\": 0}; got " +
                     task_info(load_tf_config()).dump());
  }
  validate_task(spec, *type, *id, kSource);
}

}  // namespace strata::distribute
