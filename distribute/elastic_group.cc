#include "distribute/elastic_group.h"

#include <algorithm>
#include <optional>
#include <string>
#include <thread>

#include "distribute/cluster/coordination/coordination_client.h"
#include "distribute/errors.h"

namespace strata::distribute {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string prefix_of(uint64_t generation) { return "gloo/g" + std::to_string(generation); }

// "the job is finishing (chief 0 (...) reached the shutdown barrier)" once a heartbeat told
// `client` so (no generation forms again); "" before.
std::string finishing_reason(const CoordinationClient& client) {
  const std::string finishing = client.job_finishing();
  return finishing.empty() ? "" : "the job is finishing (" + finishing + ")";
}

}  // namespace

ElasticGroup::ElasticGroup(CoordinationClient& client, GlooOptions options)
    : client_(client), options_(std::move(options)), self_(client.self_index()) {}

ElasticGroup::View ElasticGroup::form(uint64_t after_generation, milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  auto left = [&] {
    return std::max(milliseconds(0),
                    std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
  };
  uint64_t generation = after_generation;
  std::string last_failure;
  // The training is over (a member reached the shutdown barrier): no generation will form
  // again, so this task is not taken in.
  auto throw_if_finishing = [&] {
    if (const std::string why = finishing_reason(client_); !why.empty()) {
      throw JobFinishedError("elastic group: " + why + ", so " + client_.self().name() +
                             " was not taken in: there is no training left to join");
    }
  };
  for (;;) {
    throw_if_finishing();
    if (left() == milliseconds(0) && !last_failure.empty()) {
      throw CoordinationError("elastic group: no generation after " +
                              std::to_string(after_generation) + " formed within " +
                              std::to_string(timeout.count()) + " ms; the last try: " +
                              last_failure);
    }
    // In slices, so that a task waiting to be taken in hears that the job is finishing.
    CoordinationClient::Membership m;
    for (;;) {
      try {
        m = client_.membership_after(generation, std::min(left(), milliseconds(1000)));
        break;
      } catch (const CoordinationError&) {
        if (client_.posted_error() || left() == milliseconds(0)) throw;
        throw_if_finishing();
        std::this_thread::sleep_for(std::min(left(), milliseconds(50)));  // no spin on a refusal
      }
    }
    generation = m.generation;
    auto me = std::find(m.members.begin(), m.members.end(), self_);
    if (me == m.members.end()) continue;   // not admitted yet: the next generation
    View view;
    view.generation = m.generation;
    view.members = m.members;
    view.rank = int(me - m.members.begin());
    GlooOptions options = options_;
    options.prefix = prefix_of(m.generation);
    options.timeout = std::min(options.timeout, std::max(milliseconds(1), left()));
    // A generation that a newer one replaced never forms (its members move on to the newer
    // one, some of them perhaps straight away): stop waiting for it as soon as one is heard of.
    options.abandon = [this, generation = m.generation]() -> std::string {
      if (std::optional<std::string> error = client_.posted_error()) return *error;
      if (std::string why = finishing_reason(client_); !why.empty()) return why;
      const uint64_t seen = client_.membership_generation_seen();
      if (seen <= generation) return "";
      return "membership generation " + std::to_string(seen) + " replaced generation " +
             std::to_string(generation) + " before it formed";
    };
    if (options_.rank_name) {
      options.rank_name = [names = options_.rank_name, members = m.members](int rank) {
        return names(members.at(size_t(rank)));
      };
    }
    try {
      view.communicator = std::make_shared<GlooCommunicator>(client_, view.rank,
                                                             int(m.members.size()), options);
    } catch (const CoordinationError& e) {
      // A member vanished (or a newer generation replaced this one) during the rendezvous: the
      // service announces the next generation; form that one. A failed job fails here for good.
      if (client_.posted_error()) throw;
      throw_if_finishing();
      last_failure = e.what();
      continue;
    }
    erase_previous(view);
    last_ = view;
    return view;
  }
}

bool ElasticGroup::changed(const View& view) const {
  return client_.membership_generation_seen() > view.generation;
}

// What this task left in the store under the previous generation, and, from the new group's
// rank 0, what the members who left did: the store keeps only live generations' keys.
void ElasticGroup::erase_previous(const View& next) {
  if (!last_.communicator) return;
  std::vector<int> ranks{last_.rank};
  if (next.rank == 0) {
    for (size_t r = 0; r < last_.members.size(); ++r) {
      if (!std::binary_search(next.members.begin(), next.members.end(), last_.members[r])) {
        ranks.push_back(int(r));
      }
    }
  }
  const std::string prefix = prefix_of(last_.generation);
  for (int r : ranks) {
    for (const std::string& key :
         GlooCommunicator::store_keys(prefix, r, int(last_.members.size()))) {
      try {
        client_.erase(key);
      } catch (const CoordinationError&) {
        return;   // the job failed meanwhile: nothing left to tidy
      }
    }
  }
}

}  // namespace strata::distribute
