// NcclCommGuard: one NCCL communicator and every call on it, guarded against its abort.
//
// The problem: abort() runs on another thread (the cluster's heartbeat, or the replica runner
// when a replica fails) and calls ncclCommAbort, which FREES the communicator, while a replica
// thread may be inside ncclAllReduce(comm) or polling ncclCommGetAsyncError(comm). Any of those
// calls after the free reads freed memory. As PyTorch's NCCLComm does, the guard keeps the
// communicator with a mutex and an aborted flag: every call on it runs under the mutex, after a
// check of the flag, and abort() sets the flag, calls ncclCommAbort and forgets the communicator
// under the same mutex, so no call can see it freed.
//
// Why holding the mutex across a call cannot deadlock abort() behind an in-flight collective:
// every communicator Strata makes is nonblocking (ncclConfig_t::blocking = 0), and on those every
// NCCL call except ncclCommAbort/ncclCommDestroy returns at once (ncclInProgress while NCCL works
// in the background). A collective that waits for a peer that never comes is blocked on the GPU
// (its kernel) and on the host only in the wait for its outcome, which polls
// ncclCommGetAsyncError with the mutex taken for each poll alone, never across the wait. So
// abort() waits at most for one enqueue or one poll to return, then ncclCommAbort ends the
// kernels (the documented way to unblock them) and the waiting thread's next poll finds the flag
// and fails naming the abort's reason.
//
// No NCCL or CUDA header: NCCL's functions come through a table (NcclCommCalls; the real ones,
// through the lazily loaded libnccl, in nccl/nccl_communicator.cc), so the guard is built in
// every build and tested on machines without GPUs against fakes that count calls and fail on any
// use of a freed communicator (tests/distribute/test_nccl_comm_guard.cc).
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

struct ncclComm;  // NCCL's opaque communicator: nccl.h's ncclComm_t is ncclComm*

namespace strata::distribute {

// NCCL's status codes (ncclResult_t) the guard interprets; nccl/nccl_communicator.cc checks
// them against nccl.h.
inline constexpr int kNcclSuccess = 0;
inline constexpr int kNcclInProgress = 7;

// The NCCL functions the guard itself calls, statuses as int (ncclResult_t's values).
struct NcclCommCalls {
  int (*get_async_error)(ncclComm* comm, int* async_error);  // ncclCommGetAsyncError
  int (*abort)(ncclComm* comm);                              // ncclCommAbort: frees comm
  int (*finalize)(ncclComm* comm);                           // ncclCommFinalize
  int (*destroy)(ncclComm* comm);                            // ncclCommDestroy: frees comm
  const char* (*last_error)(ncclComm* comm);                 // ncclGetLastError
  const char* (*error_string)(int status);                   // ncclGetErrorString
};

class NcclCommGuard {
 public:
  // `label` names the rank in errors ("rank 1 of 4 on /gpu:0"). `calls` must outlive the guard.
  NcclCommGuard(const NcclCommCalls& calls, std::string label);
  // Leaves the communicator alone: its owner ends it first (begin/end_shutdown, or abort).
  ~NcclCommGuard() = default;
  NcclCommGuard(const NcclCommGuard&) = delete;
  NcclCommGuard& operator=(const NcclCommGuard&) = delete;

  // Hands over the communicator a set-up made (nonblocking, ready). When abort() came first, the
  // communicator is aborted here instead and false returned: nobody ever uses it.
  bool publish(ncclComm* comm);

  // One operation on the communicator: `call(comm)` (ncclAllReduce & co., enqueueing on a
  // stream) runs under the mutex; when it returns ncclInProgress, its outcome is awaited by
  // polling ncclCommGetAsyncError, the mutex taken per poll. CollectiveError
  //   "NCCL <what> on <label>: the communicator was aborted (<reason>)"
  // when abort() (or a shutdown) came before or comes during the call, and
  //   "NCCL error in <what> on <label>: <NCCL's text> (<NCCL's last error>); <fix>"
  // when NCCL reports a failure. `call` must not block (nonblocking communicators' calls don't).
  void run(const std::string& what, const std::function<int(ncclComm*)>& call,
           const std::string& fix = "");

  // Marks the guard aborted with `reason` (every later run() fails naming it, and so does a run()
  // waiting for its outcome at its next poll), then calls ncclCommAbort and forgets the
  // communicator, all under the mutex. Idempotent: false when the guard was already aborted or
  // shut down (the first reason stays). Before publish(), only marks: publish() then aborts.
  bool abort(const std::string& reason);

  // Whether run() fails at once (aborted or shut down); reason() says why.
  bool closed() const;
  std::string reason() const;
  // Whether a communicator is held and open: what a shutdown would finalize.
  bool live() const;

  // The graceful end, in two steps so that a group starts every rank's finalize before waiting
  // for any (finalizing is collective). begin_shutdown closes the guard (later runs fail with
  // `reason`) and calls ncclCommFinalize: false when there was nothing to finalize (never
  // published, or aborted), or finalizing failed (the communicator is then aborted).
  // end_shutdown polls until the communicator is quiescent, then ncclCommDestroy; one that fails
  // or is not quiescent by `deadline` is aborted instead (a peer that never finalizes must not
  // hang the exit). Both are safe against a concurrent abort(); end_shutdown does nothing after
  // one.
  bool begin_shutdown(const std::string& reason);
  void end_shutdown(std::chrono::steady_clock::time_point deadline);

 private:
  // Requires mutex_.
  [[noreturn]] void throw_closed(const std::string& what) const;
  [[noreturn]] void throw_failed(const std::string& what, int status, const std::string& fix) const;
  void abort_locked();

  const NcclCommCalls& calls_;
  const std::string label_;
  mutable std::mutex mutex_;  // held across every call that takes comm_
  ncclComm* comm_ = nullptr;  // null before publish() and after abort / destroy
  bool closed_ = false;       // set by abort() and begin_shutdown(); run() fails from then on
  bool shutting_down_ = false;
  std::string reason_;
};

}  // namespace strata::distribute
