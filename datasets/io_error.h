// IOError: a file or directory the caller named cannot be found, opened, read or written.
// Malformed contents (bad magic number, truncated data, labels out of range) are ValueErrors;
// IOError is for the cases where the bytes never arrive, like Python's OSError.
#pragma once

#include "framework/core/error.h"

namespace strata {

class IOError : public Error {
 public:
  using Error::Error;
};

}  // namespace strata
