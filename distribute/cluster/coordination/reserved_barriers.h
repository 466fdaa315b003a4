// Internal: the barrier ids CoordinationClient uses for connect() and shutdown(). The service
// words their timeouts for those operations and treats them specially (the connect barrier
// starts the job; a task at the shutdown barrier need not heartbeat). User barriers may not start
// with "strata/": the client refuses them.
#pragma once

namespace strata::distribute::coordination_internal {

inline constexpr const char* kConnectBarrier = "strata/connect";
inline constexpr const char* kShutdownBarrier = "strata/shutdown";

}  // namespace strata::distribute::coordination_internal
