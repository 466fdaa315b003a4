// A collective operation running behind its caller (an all-reduce started while the backward
// pass goes on). wait() blocks until it is done and rethrows its error.
#pragma once

namespace strata {

class CollectiveWork {
 public:
  virtual ~CollectiveWork() = default;
  virtual void wait() = 0;
  virtual bool done() const = 0;
};

}  // namespace strata
