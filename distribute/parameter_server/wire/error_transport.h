// A step function's error crosses from a worker to the coordinator as (type name, message) and
// is raised there as the same strata::Error subclass, so `catch (const ValueError&)` around
// join() catches what a remote step raised (TensorFlow re-raises the worker's error type too).
#pragma once

#include <exception>
#include <string>

namespace strata::distribute {

// "ValueError", "ShapeError", ... for a strata::Error subclass; "Error" for any other
// strata::Error or std::exception; "unknown" for anything else.
std::string error_type_name(const std::exception_ptr& error);
// The message of `error` (what()), or "unknown error".
std::string error_message(const std::exception_ptr& error);
// An exception of the class `type_name` names (strata::Error for names it does not know).
std::exception_ptr make_error(const std::string& type_name, const std::string& message);

}  // namespace strata::distribute
