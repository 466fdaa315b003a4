// The errors distribute/ raises, in one header: every strata::Error subclass a distributed job
// can throw besides framework/core/error.h's (ValueError for a bad cluster config, DeviceError,
// ...). A user's `catch` needs only this header (or <strata/distribute.h>).
#pragma once

#include "framework/core/error.h"

namespace strata::distribute {

// A peer of a multi-process job is gone, a wait across processes timed out, or another task
// posted a fatal error: the message names the operation, the task(s) concerned and the fix.
class CoordinationError : public Error {
 public:
  using Error::Error;
};

// An elastic job's worker that came (or came back) after the training was over: a member had
// reached the shutdown barrier, so no generation would take it in (torchelastic's closed
// rendezvous). Nothing failed: a program that catches it exits with success, as the apps do.
class JobFinishedError : public CoordinationError {
 public:
  using CoordinationError::CoordinationError;
};

// A collective that cannot complete: ranks disagree on shapes, dtypes or the operation, or a
// rank did not arrive within the timeout (the message names the missing ranks).
class CollectiveError : public Error {
 public:
  using Error::Error;
};

// A closure scheduled on a ClusterCoordinator that never ran: an earlier closure raised an
// error, which cancelled the queue (TensorFlow's CancelledError).
class CancelledError : public Error {
 public:
  using Error::Error;
};

}  // namespace strata::distribute
