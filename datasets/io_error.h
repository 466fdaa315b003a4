// IOError now lives in framework/core/error.h (checkpoints raise it too); this header stays so
// existing includes keep working.
#pragma once

#include "framework/core/error.h"
