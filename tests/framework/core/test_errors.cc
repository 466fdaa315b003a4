// Every exception Strata throws derives from strata::Error, so one catch sees them all: user
// errors, internal invariant failures (InternalError) and the apps' flag errors.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include <strata/strata.h>

#include "apps/common/flag_error.h"

namespace strata {
namespace {

TEST(Errors, EveryStrataExceptionIsAStrataError) {
  static_assert(std::is_base_of_v<Error, InternalError>);
  static_assert(std::is_base_of_v<Error, ShapeError>);
  static_assert(std::is_base_of_v<Error, DTypeError>);
  static_assert(std::is_base_of_v<Error, ValueError>);
  static_assert(std::is_base_of_v<Error, IndexError>);
  static_assert(std::is_base_of_v<Error, DeviceError>);
  static_assert(std::is_base_of_v<Error, ResourceExhaustedError>);
  static_assert(std::is_base_of_v<Error, StateError>);
  static_assert(std::is_base_of_v<Error, IOError>);
  static_assert(std::is_base_of_v<Error, TrainingInterrupted>);
  static_assert(std::is_base_of_v<Error, apps::FlagError>);
  // A failed internal check is caught by `catch (const strata::Error&)` and says it is a bug.
  std::string what;
  try {
    STRATA_CHECK(1 + 1 == 3);
  } catch (const Error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("internal check failed: 1 + 1 == 3"), std::string::npos) << what;
  EXPECT_NE(what.find("bug in Strata"), std::string::npos) << what;
  // The apps' flag errors are too (parsing them is tested in tests/apps/).
}

}  // namespace
}  // namespace strata
