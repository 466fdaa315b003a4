// What the coordination tests share: a cluster of worker tasks, and the message of the
// CoordinationError a call throws.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distribute/cluster/coordination/coordination_task.h"
#include "distribute/errors.h"

namespace strata::testing {

// worker 0..n-1 at localhost:<first_port + i>; the addresses only name the tasks (clients dial
// the service's real port), so each test file takes its own range to keep messages apart.
inline std::vector<distribute::CoordinationTask> worker_tasks(int n, int first_port) {
  std::vector<distribute::CoordinationTask> tasks;
  for (int i = 0; i < n; ++i) {
    tasks.push_back({"worker", i, "localhost:" + std::to_string(first_port + i)});
  }
  return tasks;
}

// The message of the CoordinationError `f` throws ("" and a test failure when it does not).
template <class F>
std::string coordination_error_of(F&& f) {
  try {
    f();
  } catch (const distribute::CoordinationError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a CoordinationError";
  return "";
}

}  // namespace strata::testing
