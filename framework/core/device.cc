#include "framework/core/device.h"

#include <algorithm>
#include <cctype>

#include "framework/core/error.h"

namespace strata {

std::string Device::to_string() const {
  return std::string(type == DeviceType::kCPU ? "/cpu:" : "/gpu:") + std::to_string(index);
}

Device Device::parse(const std::string& name) {
  std::string s = name;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s.rfind("/device:", 0) == 0) s = s.substr(8);
  if (!s.empty() && s[0] == '/') s = s.substr(1);
  std::string kind = s, idx = "0";
  if (auto colon = s.find(':'); colon != std::string::npos) {
    kind = s.substr(0, colon);
    idx = s.substr(colon + 1);
  }
  const bool digits = !idx.empty() && idx.size() < 6 &&
                      std::all_of(idx.begin(), idx.end(), [](unsigned char c) { return std::isdigit(c); });
  if (digits && kind == "cpu") return cpu(std::stoi(idx));
  if (digits && (kind == "gpu" || kind == "cuda")) return gpu(std::stoi(idx));
  throw ValueError("device: cannot parse '" + name + "'; expected a name like /cpu:0 or /gpu:1");
}

}  // namespace strata
