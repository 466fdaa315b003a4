// cpu_runtime.h: asks the loaded oneDNN library, not its headers, so a shared libdnnl replaced
// after the build reports its own version.
#include "framework/backend/cpu_runtime.h"

#include <oneapi/dnnl/dnnl.h>

#include <cstring>

namespace strata::cpu {

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  std::string text = std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                     std::to_string(v->patch);
  // The hash is optional ("N/A" or empty in builds without git metadata).
  if (v->hash != nullptr && std::strlen(v->hash) > 0 && std::strcmp(v->hash, "N/A") != 0) {
    text += " (git " + std::string(v->hash).substr(0, 7) + ")";
  }
  return text;
}

}  // namespace strata::cpu
