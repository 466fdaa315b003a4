// distribute/: everything a user needs to train with a distribution strategy.
#pragma once

#include "distribute/central_storage_strategy.h"
#include "distribute/cross_device_ops.h"
#include "distribute/mirrored_strategy.h"
#include "distribute/one_device_strategy.h"
#include "framework/config/devices.h"
#include "framework/strategy/strategy.h"
