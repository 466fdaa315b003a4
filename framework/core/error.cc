#include "framework/core/error.h"

namespace strata {

void internal_check_failed(const char* condition, const char* file, int line) {
  throw InternalError(std::string("internal check failed: ") + condition + " at " + file + ":" +
                      std::to_string(line) + " (this is a bug in Strata; please report it)");
}

}  // namespace strata
