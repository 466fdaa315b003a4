#include "apps/strata_info/system_report.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace strata_info {
namespace {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

// "13.0" -> {13, 0}; {0, 0} when empty or malformed.
std::pair<int, int> major_minor(const std::string& version) {
  int major = 0, minor = 0;
  const size_t dot = version.find('.');
  try {
    major = std::stoi(version.substr(0, dot));
    if (dot != std::string::npos) minor = std::stoi(version.substr(dot + 1));
  } catch (const std::exception&) {
    return {0, 0};
  }
  return {major, minor};
}

// Why there is no GPU to list, most basic cause first.
std::string why_no_gpu(const SystemReport& r) {
  if (!r.built_with_cuda) {
    return "this build of Strata has no CUDA backend (configure found no nvcc, cuBLAS or cuDNN; "
           "see the cmake output)";
  }
  if (r.cuda.cuda_driver.empty()) {
    return "no NVIDIA driver is loaded (libcuda.so.1 was not found): install the driver, or run "
           "on a machine with a GPU";
  }
  if (major_minor(r.cuda.cuda_driver) < major_minor(r.cuda.cuda_runtime)) {
    return "the NVIDIA driver supports CUDA " + r.cuda.cuda_driver + ", older than the CUDA " +
           r.cuda.cuda_runtime + " Strata was built with: update the driver";
  }
  if (r.cuda_visible_devices_set) {
    return "the driver shows this process no GPU with CUDA_VISIBLE_DEVICES='" +
           r.cuda_visible_devices + "' (unset it, or name a GPU nvidia-smi lists)";
  }
  return "the NVIDIA driver reports no GPU (check nvidia-smi)";
}

}  // namespace

SystemReport collect_system_report(const std::string& strata_version) {
  SystemReport r;
  r.strata_version = strata_version;
  r.built_with_cuda = strata::gpu::built_with_cuda();
  r.cuda = strata::gpu::versions();
  r.nccl = strata::distribute::nccl_available();
  r.nccl_version = strata::distribute::nccl_version();
  r.onednn_version = strata::cpu::onednn_version();
  r.cpu_model = cpu_model_name();
  r.cpu_cores = int(sysconf(_SC_NPROCESSORS_ONLN));
  r.intra_op_threads = strata::get_num_threads();
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) r.host_memory_bytes = uint64_t(pages) * uint64_t(page_size);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    r.cuda_visible_devices_set = true;
    r.cuda_visible_devices = visible;
  }
  for (const strata::Device& d : strata::config::list_physical_devices("GPU")) {
    GpuReport g;
    g.device = d;
    try {
      g.properties = strata::gpu::properties(d.index);
    } catch (const strata::Error& e) {  // one broken GPU must not hide the others
      g.error = e.what();
    }
    r.gpus.push_back(std::move(g));
  }
  if (r.gpus.empty()) r.no_gpu_reason = why_no_gpu(r);
  return r;
}

}  // namespace strata_info
