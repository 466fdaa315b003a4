#include "distribute/parameter_server/wire/error_transport.h"

#include <functional>
#include <utility>
#include <vector>

#include "distribute/errors.h"
#include "distribute/parameter_server/remote_value.h"
#include "framework/core/error.h"

namespace strata::distribute {
namespace {

struct ErrorKind {
  const char* name;
  std::function<bool(const std::exception_ptr&)> matches;
  std::function<std::exception_ptr(const std::string&)> make;
};

template <typename E>
ErrorKind kind(const char* name) {
  return {name,
          [](const std::exception_ptr& e) {
            try {
              std::rethrow_exception(e);
            } catch (const E&) {
              return true;
            } catch (...) {
              return false;
            }
          },
          [](const std::string& message) { return std::make_exception_ptr(E(message)); }};
}

// Most derived first: the first match names the error.
const std::vector<ErrorKind>& kinds() {
  static const std::vector<ErrorKind> all = {
      kind<ShapeError>("ShapeError"),
      kind<DTypeError>("DTypeError"),
      kind<ValueError>("ValueError"),
      kind<IndexError>("IndexError"),
      kind<DeviceError>("DeviceError"),
      kind<ResourceExhaustedError>("ResourceExhaustedError"),
      kind<StateError>("StateError"),
      kind<IOError>("IOError"),
      kind<InternalError>("InternalError"),
      kind<CancelledError>("CancelledError"),
      kind<CoordinationError>("CoordinationError"),
      kind<Error>("Error"),
  };
  return all;
}

}  // namespace

std::string error_type_name(const std::exception_ptr& error) {
  for (const ErrorKind& k : kinds()) {
    if (k.matches(error)) return k.name;
  }
  try {
    std::rethrow_exception(error);
  } catch (const std::exception&) {
    return "Error";
  } catch (...) {
    return "unknown";
  }
}

std::string error_message(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

std::exception_ptr make_error(const std::string& type_name, const std::string& message) {
  for (const ErrorKind& k : kinds()) {
    if (type_name == k.name) return k.make(message);
  }
  return std::make_exception_ptr(Error(message));
}

}  // namespace strata::distribute
