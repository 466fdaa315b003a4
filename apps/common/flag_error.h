// The error every bad command line ends in: a flag the app does not know, a value that does not
// parse or is out of its range, flags that contradict each other. The apps exit with status 2
// for it (main_guard.h). Kept apart from flags.h so code that only throws or catches it needs no
// absl headers.
#pragma once

#include "framework/core/error.h"

namespace apps {

// A strata::Error like everything else the apps throw, so one catch reports them all.
class FlagError : public strata::Error {
 public:
  using strata::Error::Error;
};

}  // namespace apps
