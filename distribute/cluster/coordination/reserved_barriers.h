// Internal: the barrier ids CoordinationClient uses for connect() and shutdown(). The service
// words their timeouts for those operations and treats them specially (the connect barrier
// starts the job; a task at the shutdown barrier need not heartbeat). User barriers may not start
// with "strata/": the client refuses them. And the keys under which the service publishes the
// elastic membership (coordination_options.h), which no task may write.
#pragma once

namespace strata::distribute::coordination_internal {

inline constexpr const char* kConnectBarrier = "strata/connect";
inline constexpr const char* kShutdownBarrier = "strata/shutdown";
// "<generation>:<member>,<member>,..." (indices into the service's task list): the latest under
// kMembershipKey, each generation's under kMembershipKey + "/" + generation.
inline constexpr const char* kMembershipKey = "strata/membership";

}  // namespace strata::distribute::coordination_internal
