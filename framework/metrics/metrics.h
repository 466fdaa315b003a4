// All metrics (keras.metrics).
#pragma once

#include "framework/metrics/accuracy.h"
#include "framework/metrics/confusion.h"
#include "framework/metrics/mean.h"
#include "framework/metrics/metric.h"
#include "framework/metrics/metric_factory.h"
