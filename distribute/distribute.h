// distribute/: everything a user needs to train with a distribution strategy.
#pragma once

#include "distribute/central_storage_strategy.h"
#include "distribute/cluster_resolver/cluster_resolver.h"
#include "distribute/cluster_resolver/cluster_roles.h"
#include "distribute/cluster_resolver/cluster_spec.h"
#include "distribute/cluster_resolver/run_config.h"
#include "distribute/cluster_resolver/slurm_cluster_resolver.h"
#include "distribute/cluster_resolver/tfconfig_cluster_resolver.h"
#include "distribute/cross_device_ops.h"
#include "distribute/job_security.h"
#include "distribute/mirrored_strategy.h"
#include "distribute/multi_worker_mirrored_strategy.h"
#include "distribute/one_device_strategy.h"
#include "distribute/preemption_checkpoint_handler.h"
#include "framework/config/devices.h"
#include "framework/strategy/strategy.h"
