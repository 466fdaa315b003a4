// All losses (keras.losses).
#pragma once

#include "framework/losses/crossentropy.h"
#include "framework/losses/loss.h"
#include "framework/losses/loss_factory.h"
#include "framework/losses/reduction.h"
#include "framework/losses/regression.h"
