#include "framework/core/error.h"

namespace strata {

void internal_check_failed(const char* condition, const char* file, int line) {
  // Appended piecewise: g++ 12 warns falsely (-Wrestrict) on a chain of operator+.
  std::string message = "internal check failed: ";
  message += condition;
  message += " at ";
  message += file;
  message += ":";
  message += std::to_string(line);
  message += " (this is a bug in Strata; please report it)";
  throw InternalError(message);
}

}  // namespace strata
