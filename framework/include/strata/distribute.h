// <strata/distribute.h>: everything a user needs to train with a distribution strategy — the
// strategies, their options, cluster resolvers (TF_CONFIG, Slurm), job security, the
// preemption handler and the errors a distributed job raises. (<strata/strata.h> includes it;
// the parameter-server API is <strata/parameter_server.h>.) distribute/README.md maps the folder.
#pragma once

#include "distribute/central_storage_strategy.h"
#include "distribute/cluster/job_security.h"
#include "distribute/cluster/resolvers/cluster_resolver.h"
#include "distribute/cluster/resolvers/cluster_roles.h"
#include "distribute/cluster/resolvers/cluster_spec.h"
#include "distribute/cluster/resolvers/run_config.h"
#include "distribute/cluster/resolvers/slurm_cluster_resolver.h"
#include "distribute/cluster/resolvers/tfconfig_cluster_resolver.h"
#include "distribute/collectives/nccl_available.h"
#include "distribute/cross_device_ops.h"
#include "distribute/errors.h"
#include "distribute/mirrored_strategy.h"
#include "distribute/multi_worker_mirrored_strategy.h"
#include "distribute/one_device_strategy.h"
#include "distribute/preemption_checkpoint_handler.h"
#include "framework/config/devices.h"
#include "framework/strategy/strategy.h"
