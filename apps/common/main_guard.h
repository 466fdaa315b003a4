// Runs an app's body and turns every exception into a message and an exit status, so nothing
// from the standard library escapes as "terminate called after throwing ...":
//   2          bad flags (FlagError)
//   128 + sig  training stopped by SIGTERM / SIGINT (what shells and schedulers expect of a
//              signalled process); in a multi-worker job every worker exits so when any one
//              of them was signalled (the job stopped together and the chief saved)
//   0          also: an elastic job's worker that came after the training was over
//              (JobFinishedError: nothing to do)
//   1          everything else: errors Strata reports (missing data, bad shapes, an unusable
//              --model_dir, ...), out of memory, a failed file-system call, a bug.
#pragma once

#include <filesystem>
#include <iostream>
#include <new>
#include <stdexcept>
#include <typeinfo>

#include <strata/strata.h>

#include "apps/common/flag_error.h"

namespace apps {

// Training stopped by `signal` and the reason is printed already (fit_explaining_interruption
// does so before the strategy leaves the job): guarded_main only exits with 128 + signal.
struct ReportedInterruption {
  int signal;
};

template <typename Body>
int guarded_main(Body&& body) {
  try {
    return body();
  } catch (const FlagError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const ReportedInterruption& e) {
    return 128 + e.signal;
  } catch (const strata::distribute::JobFinishedError& e) {
    // A worker of an elastic job started (or restarted) after its training was over.
    std::cerr << "nothing to do: " << e.what() << "\n";
    return 0;
  } catch (const strata::TrainingInterrupted& e) {
    std::cerr << e.what() << "\n";
    return 128 + e.signal();
  } catch (const strata::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    // No allocation here: the heap is what ran out.
    std::cerr << "error: out of memory (std::bad_alloc): the model, the batch or the data did "
                 "not fit in this machine's memory; try a smaller --batch_size or model\n";
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "error: a file-system operation failed: " << e.what()
              << "; check that the path exists, is a directory where one is expected and is "
                 "writable\n";
    return 1;
  } catch (const std::out_of_range& e) {
    std::cerr << "error: internal error (std::out_of_range: " << e.what()
              << "): a bug in this app or in Strata; please report it with the command line\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: unexpected " << typeid(e).name() << ": " << e.what()
              << " (a bug in this app or in Strata; please report it with the command line)\n";
    return 1;
  } catch (...) {
    std::cerr << "error: unexpected exception of unknown type (a bug; please report it with the "
                 "command line)\n";
    return 1;
  }
}

}  // namespace apps
