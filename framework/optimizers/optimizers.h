// All optimizers and learning-rate schedules (keras.optimizers).
#pragma once

#include "framework/optimizers/adagrad.h"
#include "framework/optimizers/adam.h"
#include "framework/optimizers/adamw.h"
#include "framework/optimizers/learning_rate_schedule.h"
#include "framework/optimizers/loss_scale_optimizer.h"
#include "framework/optimizers/optimizer.h"
#include "framework/optimizers/optimizer_factory.h"
#include "framework/optimizers/rmsprop.h"
#include "framework/optimizers/sgd.h"
