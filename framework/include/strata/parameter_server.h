// <strata/parameter_server.h>: parameter-server training (tf.distribute.ParameterServerStrategy):
// the strategy, its ClusterCoordinator and RemoteValues, the step registry that names the
// functions closures run, the Server every ps and worker task runs, the task roles read from
// TF_CONFIG, variable partitioners and ShardedVariable, and the side-car evaluator.
// (<strata/strata.h> includes it.) The wire layer (parameter_server/wire/) is internal.
#pragma once

#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_options.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/partitioners.h"
#include "distribute/parameter_server/ps_roles.h"
#include "distribute/parameter_server/remote_value.h"
#include "distribute/parameter_server/server.h"
#include "distribute/parameter_server/sharded_variable.h"
#include "distribute/parameter_server/sidecar_evaluator.h"
#include "distribute/parameter_server/step_registry.h"
