#include "distribute/cluster/resolvers/cluster_resolver.h"

#include "framework/backend/gpu_runtime.h"

namespace strata::distribute {

std::string format_master_url(const std::string& address, const std::string& rpc_layer) {
  return rpc_layer.empty() ? address : rpc_layer + "://" + address;
}

std::map<std::string, int> ClusterResolver::num_accelerators(const std::optional<std::string>&,
                                                              const std::optional<int>&) const {
  const int gpus = gpu::device_count();
  if (gpus == 0) return {};
  return {{"GPU", gpus}};
}

SimpleClusterResolver::SimpleClusterResolver(ClusterSpec cluster_spec,
                                             SimpleClusterResolverOptions options)
    : spec_(std::move(cluster_spec)), options_(std::move(options)) {}

std::string SimpleClusterResolver::master(const std::optional<std::string>& task_type,
                                          const std::optional<int>& task_id,
                                          const std::optional<std::string>& rpc_layer) const {
  const std::string address = task_type && task_id ? spec_.task_address(*task_type, *task_id)
                                                   : options_.master_;
  return format_master_url(address, rpc_layer && !rpc_layer->empty() ? *rpc_layer
                                                                      : options_.rpc_layer_);
}

std::map<std::string, int> SimpleClusterResolver::num_accelerators(
    const std::optional<std::string>& task_type, const std::optional<int>& task_id) const {
  if (options_.num_accelerators_) return *options_.num_accelerators_;
  return ClusterResolver::num_accelerators(task_type, task_id);
}

}  // namespace strata::distribute
