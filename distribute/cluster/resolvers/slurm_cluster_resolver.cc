#include "distribute/cluster/resolvers/slurm_cluster_resolver.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "framework/core/error.h"

namespace strata::distribute {
namespace {

// Far more hosts or tasks than any cluster has: a hostile "n[0-999999999]" is an error, not an
// allocation of billions of strings.
constexpr int64_t kMaxExpanded = 1 << 20;
// The text of the expanded host names, all together: a million hosts of the longest names DNS
// allows would be a quarter GiB; 16 MiB is still hundreds of thousands of real node names.
constexpr size_t kMaxExpandedBytes = size_t(16) << 20;
// DNS's limit on a name.
constexpr size_t kMaxHostNameBytes = 253;

// Adds `name` to `hosts`, within the limits above (`bytes`: the text so far).
void add_host(std::string name, std::vector<std::string>& hosts, size_t& bytes) {
  if (name.size() > kMaxHostNameBytes) {
    throw std::invalid_argument("host name \"" + name.substr(0, 40) + "...\" is " +
                                std::to_string(name.size()) + " characters long, over DNS's " +
                                std::to_string(kMaxHostNameBytes));
  }
  bytes += name.size();
  if (bytes > kMaxExpandedBytes) {
    throw std::invalid_argument("its host names come to more than " +
                                std::to_string(kMaxExpandedBytes) + " bytes");
  }
  hosts.push_back(std::move(name));
}

// "a,,b" -> "a" "" "b" (empty items kept: the callers reject them).
std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1) {
    items.push_back(text.substr(start, comma - start));
  }
  items.push_back(text.substr(start));
  return items;
}

// Splits at commas outside brackets; throws a plain message the caller wraps.
std::vector<std::string> split_hostlist(const std::string& hostlist) {
  std::vector<std::string> parts;
  std::string current;
  bool in_brackets = false;
  for (char c : hostlist) {
    if (in_brackets) {
      if (c == '[') throw std::invalid_argument("nested '['");
      if (c == ']') in_brackets = false;
    } else if (c == '[') {
      in_brackets = true;
    } else if (c == ']') {
      throw std::invalid_argument("']' without '['");
    } else if (c == ',') {
      if (current.empty()) throw std::invalid_argument("an empty host name");
      parts.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  if (in_brackets) throw std::invalid_argument("'[' without ']'");
  if (current.empty()) throw std::invalid_argument("an empty host name");
  parts.push_back(current);
  return parts;
}

// "3-5,7" -> "3" "4" "5" "7", each as wide as the first number of its range ("01-03" -> 01..03).
void expand_range(const std::string& prefix, const std::string& ranges,
                  std::vector<std::string>& hosts, size_t& bytes) {
  for (const std::string& item : split_commas(ranges)) {
    const size_t dash = item.find('-');
    const std::string lo = item.substr(0, dash);
    const std::optional<int> first = parse_count(lo);
    const std::optional<int> last = dash == std::string::npos ? first : parse_count(item.substr(dash + 1));
    if (!first || !last) {
      throw std::invalid_argument("range item \"" + item + "\" is not N or N-M");
    }
    const int a = *first, b = *last;
    if (b < a) throw std::invalid_argument("range \"" + item + "\" goes down");
    if (int64_t(hosts.size()) + (b - a + 1) > kMaxExpanded) {
      throw std::invalid_argument("it names more than " + std::to_string(kMaxExpanded) + " hosts");
    }
    for (int i = a; i <= b; ++i) {
      std::string n = std::to_string(i);
      if (n.size() < lo.size()) n.insert(0, lo.size() - n.size(), '0');
      add_host(prefix + n, hosts, bytes);
    }
  }
}

std::optional<std::string> env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// SLURM_<step_name>, else SLURM_<job_name>; ValueError naming both when neither is set.
std::string slurm_var(const std::string& step_name, const std::string& job_name = "") {
  if (auto v = env("SLURM_" + step_name)) return *v;
  if (!job_name.empty()) {
    if (auto v = env("SLURM_" + job_name)) return *v;
  }
  throw ValueError("SlurmClusterResolver: SLURM_" + step_name +
                   (job_name.empty() ? "" : " (or SLURM_" + job_name + ")") +
                   " is not set: not running inside a Slurm job step? Start the tasks with srun, "
                   "or use TFConfigClusterResolver with TF_CONFIG");
}

int slurm_int(const std::string& step_name, const std::string& job_name = "") {
  const std::string v = slurm_var(step_name, job_name);
  const std::optional<int> n = parse_count(v);
  if (!n) {
    throw ValueError("SlurmClusterResolver: SLURM_" + step_name + " is \"" + v +
                     "\", not a non-negative integer");
  }
  return *n;
}

// GPUs of this node: CUDA_VISIBLE_DEVICES' entries, else the driver's list, without
// initialising CUDA (CUDA_VISIBLE_DEVICES must still be settable afterwards).
int detect_gpus_per_node() {
  if (auto visible = env("CUDA_VISIBLE_DEVICES")) {
    const std::vector<std::string> ids = split_commas(*visible);
    return int(std::count_if(ids.begin(), ids.end(), [](const std::string& id) { return !id.empty(); }));
  }
  std::error_code ec;
  int n = 0;
  for (std::filesystem::directory_iterator it("/proc/driver/nvidia/gpus", ec), end;
       !ec && it != end; it.increment(ec)) {
    ++n;
  }
  return n;
}

std::map<std::string, int> task_configuration(const SlurmClusterResolverOptions& o) {
  if (!o.tasks_per_host_.empty()) return o.tasks_per_host_;
  const std::vector<std::string> hosts = expand_hostlist(slurm_var("STEP_NODELIST", "JOB_NODELIST"));
  std::map<std::string, int> config;
  if (o.tasks_per_node_) {
    for (const std::string& h : hosts) config[h] = *o.tasks_per_node_;
    return config;
  }
  const std::vector<int> counts =
      expand_tasks_per_node(slurm_var("STEP_TASKS_PER_NODE", "TASKS_PER_NODE"));
  if (counts.size() != hosts.size()) {
    throw ValueError("SlurmClusterResolver: the step's node list names " +
                     std::to_string(hosts.size()) + " host(s) but its tasks per node list " +
                     std::to_string(counts.size()) + " count(s); pass tasks_per_node");
  }
  for (size_t i = 0; i < hosts.size(); ++i) config[hosts[i]] = counts[i];
  return config;
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& hostlist) {
  std::vector<std::string> hosts;
  size_t bytes = 0;
  try {
    for (const std::string& part : split_hostlist(hostlist)) {
      const size_t open = part.find('[');
      if (open == std::string::npos) {
        add_host(part, hosts, bytes);
      } else {
        if (part.back() != ']') throw std::invalid_argument("text after ']' in \"" + part + "\"");
        expand_range(part.substr(0, open), part.substr(open + 1, part.size() - open - 2), hosts,
                     bytes);
      }
      if (int64_t(hosts.size()) > kMaxExpanded) {
        throw std::invalid_argument("it names more than " + std::to_string(kMaxExpanded) + " hosts");
      }
    }
  } catch (const std::invalid_argument& e) {
    throw ValueError("invalid Slurm hostlist \"" + hostlist + "\": " + e.what() +
                     "; expected names and ranges such as \"node[01-04,07],gpu3\"");
  }
  return hosts;
}

std::vector<int> expand_tasks_per_node(const std::string& tasks_per_node) {
  std::vector<int> out;
  const auto fail = [&](const std::string& why) {
    return ValueError("invalid Slurm tasks-per-node list \"" + tasks_per_node + "\": " + why +
                      "; expected counts such as \"3(x2),2,1\"");
  };
  for (const std::string& part : split_commas(tasks_per_node)) {
    const size_t paren = part.find('(');
    const std::optional<int> count = parse_count(part.substr(0, paren));
    std::optional<int> repeat = 1;
    if (paren != std::string::npos) {
      const std::string rep = part.substr(paren);  // "(x2)"
      const bool shaped = rep.size() >= 4 && rep.compare(0, 2, "(x") == 0 && rep.back() == ')';
      repeat = shaped ? parse_count(rep.substr(2, rep.size() - 3)) : std::nullopt;
    }
    if (!count || !repeat) throw fail("\"" + part + "\" is not N or N(xM)");
    if (int64_t(out.size()) + *repeat > kMaxExpanded) throw fail("too many nodes");
    out.insert(out.end(), size_t(*repeat), *count);
  }
  return out;
}

SlurmClusterResolver::SlurmClusterResolver(SlurmClusterResolverOptions options)
    : rpc_layer_(options.rpc_layer_) {
  if (options.port_base_ < 0 || options.port_base_ > 65535) {
    throw ValueError("SlurmClusterResolver: port_base " + std::to_string(options.port_base_) +
                     " is not a port in [0, 65535]");
  }
  const int rank = slurm_int("PROCID");
  std::map<std::string, int> jobs = options.jobs_;
  if (jobs.empty()) jobs["worker"] = slurm_int("STEP_NUM_TASKS", "NTASKS");
  const std::map<std::string, int> hosts = task_configuration(options);

  int max_tasks = 0, num_tasks = 0;
  for (const auto& [host, n] : hosts) {
    if (n < 0 || num_tasks + int64_t(n) > kMaxExpanded) {
      throw ValueError("SlurmClusterResolver: host " + host + " has " + std::to_string(n) +
                       " tasks; a count must be in [0, " + std::to_string(kMaxExpanded) + "]");
    }
    max_tasks = std::max(max_tasks, n);
    num_tasks += n;
  }
  const int gpus_per_node = options.gpus_per_node_.value_or(detect_gpus_per_node());
  gpus_per_task_ = options.gpus_per_task_.value_or(max_tasks > 0 ? gpus_per_node / max_tasks : 0);
  if (gpus_per_node < 0 || gpus_per_task_ < 0 || gpus_per_node > 4096) {
    throw ValueError("SlurmClusterResolver: gpus_per_node must be in [0, 4096] and gpus_per_task "
                     ">= 0; got " + std::to_string(gpus_per_node) + " and " +
                     std::to_string(gpus_per_task_));
  }
  if (int64_t(max_tasks) * gpus_per_task_ > gpus_per_node) {
    throw ValueError("SlurmClusterResolver: a node runs " + std::to_string(max_tasks) +
                     " task(s) of " + std::to_string(gpus_per_task_) + " GPU(s) each but has " +
                     std::to_string(gpus_per_node) + "; lower gpus_per_task or tasks per node");
  }
  int64_t requested = 0;
  for (const auto& [job, n] : jobs) {
    if (n < 0) {
      throw ValueError("SlurmClusterResolver: job '" + job + "' asks for " + std::to_string(n) +
                       " tasks; a count must be >= 0");
    }
    requested += n;
  }
  if (requested != num_tasks) {
    throw ValueError("SlurmClusterResolver: the jobs ask for " + std::to_string(requested) +
                     " task(s) but the step has " + std::to_string(num_tasks) +
                     "; make the jobs' counts add up to the step's tasks");
  }
  if (rank >= num_tasks) {
    throw ValueError("SlurmClusterResolver: SLURM_PROCID is " + std::to_string(rank) +
                     " but the step has " + std::to_string(num_tasks) + " task(s)");
  }

  // Hosts in sorted order (std::map), each task with the next port and its GPUs.
  std::vector<std::string> addresses, gpus;
  for (const auto& [host, n] : hosts) {
    for (int k = 0; k < n; ++k) {
      addresses.push_back(host + ":" + std::to_string(options.port_base_ + k));
      std::string ids;
      for (int g = k * gpus_per_task_; g < (k + 1) * gpus_per_task_; ++g) {
        ids += (ids.empty() ? "" : ",") + std::to_string(g);
      }
      gpus.push_back(ids);
    }
  }
  // Jobs in sorted order take consecutive ranks.
  std::map<std::string, std::vector<std::string>> cluster;
  int first = 0;
  for (const auto& [job, n] : jobs) {
    cluster[job].assign(addresses.begin() + first, addresses.begin() + first + n);
    if (rank >= first && rank < first + n) {
      task_type_ = job;
      task_id_ = rank - first;
    }
    first += n;
  }
  spec_ = ClusterSpec(cluster);
  visible_devices_ = gpus[size_t(rank)];
  if (options.auto_set_gpu_ && gpus_per_task_ > 0) {
    setenv("CUDA_VISIBLE_DEVICES", visible_devices_.c_str(), 1);
  }
}

std::string SlurmClusterResolver::master(const std::optional<std::string>& task_type,
                                         const std::optional<int>& task_id,
                                         const std::optional<std::string>& rpc_layer) const {
  const std::optional<std::string> type = task_type ? task_type : task_type_;
  const std::optional<int> id = task_id ? task_id : task_id_;
  if (!type || !id) return "";
  return format_master_url(spec_.task_address(*type, *id),
                           rpc_layer && !rpc_layer->empty() ? *rpc_layer : rpc_layer_);
}

std::map<std::string, int> SlurmClusterResolver::num_accelerators(
    const std::optional<std::string>&, const std::optional<int>&) const {
  if (gpus_per_task_ == 0) return {};
  return {{"GPU", gpus_per_task_}};
}

}  // namespace strata::distribute
