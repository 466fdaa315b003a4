// Runs an app's body and turns errors into a message and an exit status: 2 for bad flags,
// 1 for errors Strata reports (missing data, bad shapes, ...), 128 + signal when training was
// stopped by SIGTERM / SIGINT (what shells and schedulers expect of a signalled process).
#pragma once

#include <iostream>

#include <strata/strata.h>

#include "apps/common/flags.h"

namespace apps {

template <typename Body>
int guarded_main(Body&& body) {
  try {
    return body();
  } catch (const FlagError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const strata::TrainingInterrupted& e) {
    std::cerr << e.what() << "\n";
    return 128 + e.signal();
  } catch (const strata::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace apps
