// ElasticGroup: the cross-process group of an elastic job (issue 28's second layer; the strategy
// does not use it yet): one GlooCommunicator per membership generation of the coordination
// service (CoordinationOptions::elastic_min_tasks), its ranks the generation's members in task
// order. When a member leaves or joins, the members form the next generation's communicator
// under a prefix of its own ("gloo/g<generation>"), so no one ever reads a dead generation's
// addresses, and each erases what it left in the store under the previous one.
//
//   ElasticGroup group(client, gloo_options);
//   ElasticGroup::View view = group.form(0);             // the first membership holding this task
//   view.communicator->all_reduce(t, ReduceOp::kSum);    // throws once a member dies
//   ... catch: view = group.form(view.generation);       // the survivors' next generation
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "distribute/collectives/gloo/gloo_communicator.h"

namespace strata::distribute {

class CoordinationClient;

class ElasticGroup {
 public:
  struct View {
    uint64_t generation = 0;
    std::vector<int> members;   // task indices (the coordination service's), ascending
    int rank = -1;              // this task's place among them
    std::shared_ptr<GlooCommunicator> communicator;
  };

  // `client`: this task's, connected, of a service with an elastic membership; it must outlive
  // the group. `options`: the communicators' (their prefix is the group's own; rank_name, when
  // set, is given task indices: the group maps ranks to them).
  ElasticGroup(CoordinationClient& client, GlooOptions options);

  // The group of the first generation after `after_generation` that holds this task, its
  // communicator connected. When a member vanishes during the rendezvous, the next generation
  // is tried, all within `timeout`: CoordinationError naming the last failure after it (or at
  // once when the job failed).
  View form(uint64_t after_generation, std::chrono::milliseconds timeout);
  // Whether the coordination service has announced a generation after `view`'s (its heartbeats
  // say so within an interval): time to re-form at the next step boundary.
  bool changed(const View& view) const;

 private:
  void erase_previous(const View& next);

  CoordinationClient& client_;
  GlooOptions options_;
  int self_ = -1;   // this task's index
  View last_;       // the last one formed (its keys are erased once the next one is)
};

}  // namespace strata::distribute
