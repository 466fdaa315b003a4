#include "distribute/cluster/coordination/request_checks.h"

#include "distribute/cluster/coordination/coordination_options.h"

namespace strata::distribute::coordination_internal {

namespace {

using grpc::Status;
using grpc::StatusCode;

constexpr size_t kMaxJobNameBytes = 256;   // "chief", "worker", "ps", ... are a few bytes

Status invalid(const std::string& operation, const std::string& what) {
  return Status(StatusCode::INVALID_ARGUMENT, operation + ": " + what);
}

}  // namespace

std::string printable(std::string_view bytes, size_t limit) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < bytes.size() && i < limit; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (bytes.size() > limit) return out + "...' (" + std::to_string(bytes.size()) + " bytes)";
  return out + "'";
}

Status check_task(const std::string& operation, bool present, const coordination_pb::TaskId& task) {
  if (!present) {
    return invalid(operation, "field 'task' is missing: every request names the task sending it");
  }
  if (task.job().empty() || task.job().size() > kMaxJobNameBytes) {
    return invalid(operation, "field 'task.job' is " + std::to_string(task.job().size()) +
                                  " bytes; a job name has 1 to " +
                                  std::to_string(kMaxJobNameBytes));
  }
  if (task.index() < 0) {
    return invalid(operation, "field 'task.index' is " + std::to_string(task.index()) +
                                  "; a task index is >= 0");
  }
  return Status::OK;
}

Status check_name(const std::string& operation, const char* field, const std::string& name) {
  if (name.empty()) return invalid(operation, std::string("field '") + field + "' is empty");
  if (name.size() > kMaxCoordinationKeyBytes) {
    return invalid(operation, std::string("field '") + field + "' is " +
                                  std::to_string(name.size()) + " bytes, more than the " +
                                  std::to_string(kMaxCoordinationKeyBytes) + " allowed");
  }
  return Status::OK;
}

Status check_wait(const std::string& operation, const char* field, int64_t timeout_ms) {
  if (timeout_ms < 0 || timeout_ms > kMaxCoordinationWait.count()) {
    return invalid(operation, std::string("field '") + field + "' is " +
                                  std::to_string(timeout_ms) + " ms; a wait takes 0 to " +
                                  std::to_string(kMaxCoordinationWait.count()) + " ms (7 days)");
  }
  return Status::OK;
}

}  // namespace strata::distribute::coordination_internal
