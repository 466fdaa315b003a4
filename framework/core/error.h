// Errors a user can cause. Every message names the operation, what it expected and what it got,
// e.g. "matmul: inner dimensions differ: [64,784] x [100,10]".
#pragma once

#include <stdexcept>
#include <string>

namespace strata {

// Base of every error Strata throws for bad input; catch this to catch them all.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A tensor's shape (rank, dimension sizes, broadcasting) does not fit the operation.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A dtype the operation does not support, or two dtypes that must match and don't.
class DTypeError : public Error {
 public:
  using Error::Error;
};

// A value is out of its valid range (negative rate, unknown name, bad axis, ...).
class ValueError : public Error {
 public:
  using Error::Error;
};

// An index (gather, one_hot, slice) points outside the tensor.
class IndexError : public Error {
 public:
  using Error::Error;
};

// Tensors live on different devices, the device has no kernel for the operation, or a library
// the device needs (cuDNN, cuBLASLt, NCCL: loaded when the first GPU uses them) cannot be loaded.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// A device ran out of memory (TensorFlow's ResourceExhaustedError): the message names the device,
// the size asked for and the allocator's figures.
class ResourceExhaustedError : public Error {
 public:
  using Error::Error;
};

// Something was used in a state that does not allow it (a non-persistent tape used twice, ...).
class StateError : public Error {
 public:
  using Error::Error;
};

// A file or directory the caller named cannot be found, opened, read or written (Python's
// OSError). Malformed contents (bad magic number, truncated data, labels out of range, a corrupt
// checkpoint) are ValueErrors.
class IOError : public Error {
 public:
  using Error::Error;
};

// fit() stopped early: SIGTERM or SIGINT (preemption, Ctrl-C) reached this process or, in a
// multi-worker job, any worker (all stop after the same step); the step finished, callbacks
// saved what they save on preemption (BackupAndRestore's backup). Apps exit 128 + signal().
class TrainingInterrupted : public Error {
 public:
  TrainingInterrupted(const std::string& what, int signal) : Error(what), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// A violated internal invariant: a bug in Strata, not in the caller's code. It derives from
// Error like everything Strata throws, so `catch (const strata::Error&)` sees it too.
class InternalError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void internal_check_failed(const char* condition, const char* file, int line);

}  // namespace strata

// Internal invariants only; user mistakes throw one of the Error subclasses above.
#define STRATA_CHECK(cond) \
  do { if (!(cond)) ::strata::internal_check_failed(#cond, __FILE__, __LINE__); } while (0)
