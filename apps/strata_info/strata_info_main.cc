// strata-info: what to run first on a new machine. Prints this build of Strata (version, CUDA
// backend on/off), the versions of CUDA, cuDNN, cuBLAS, NCCL and oneDNN it runs on, the CPU, and
// every visible GPU with its memory; on a machine without GPUs, one line saying why.
//
//   strata-info            # a readable report
//   strata-info --json     # the same as one JSON object, for scripts and bug reports
#include <cstdio>
#include <string>

#include <strata/strata.h>

#include "apps/common/flags.h"
#include "apps/common/main_guard.h"
#include "apps/strata_info/system_report.h"

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

ABSL_FLAG(bool, json, false, "Print one JSON object instead of text.");

namespace {

using strata_info::GpuReport;
using strata_info::SystemReport;

double gib(uint64_t bytes) { return double(bytes) / double(uint64_t(1) << 30); }

std::string or_missing(const std::string& s, const char* missing) { return s.empty() ? missing : s; }

void print_text(const SystemReport& r) {
  std::printf("Strata %s\n", r.strata_version.c_str());
  if (r.built_with_cuda) {
    const std::string driver = r.cuda.cuda_driver.empty()
                                   ? "no NVIDIA driver loaded"
                                   : "the driver supports CUDA " + r.cuda.cuda_driver;
    std::printf("CUDA backend      on: built with CUDA %s; %s\n", r.cuda.cuda_runtime.c_str(),
                driver.c_str());
    std::printf("cuDNN             %s (built with %s)\n",
                or_missing(r.cuda.cudnn_loaded, "not loadable").c_str(), r.cuda.cudnn.c_str());
    std::printf("cuBLAS(Lt)        %s\n", or_missing(r.cuda.cublas, "not loadable").c_str());
  } else {
    std::printf("CUDA backend      off: this build has no GPU support\n");
  }
  std::printf("NCCL              %s\n",
              r.nccl ? or_missing(r.nccl_version, "not loadable").c_str()
                     : "not in this build (multi-GPU all-reduce goes through the host)");
  std::printf("oneDNN            %s\n", r.onednn_version.c_str());
  std::printf("CPU               %s%s%d cores", r.cpu_model.c_str(), r.cpu_model.empty() ? "" : ", ",
              r.cpu_cores);
  if (r.host_memory_bytes > 0) std::printf(", %.1f GiB memory", gib(r.host_memory_bytes));
  std::printf("; Strata uses %d threads (STRATA_NUM_THREADS)\n", r.intra_op_threads);
  if (r.cuda_visible_devices_set) {
    std::printf("CUDA_VISIBLE_DEVICES=%s\n", r.cuda_visible_devices.c_str());
  }
  if (r.gpus.empty()) {
    std::printf("GPUs              none: %s\n", r.no_gpu_reason.c_str());
    return;
  }
  std::printf("GPUs              %zu visible\n", r.gpus.size());
  for (const GpuReport& g : r.gpus) {
    const std::string name = g.device.to_string();
    if (!g.error.empty()) {
      std::printf("  %-7s error: %s\n", name.c_str(), g.error.c_str());
      continue;
    }
    const strata::gpu::DeviceProperties& p = g.properties;
    std::printf("  %-7s %s, compute capability %d.%d, %d SMs, %.1f GiB memory (%.1f GiB free), "
                "PCI %s\n",
                name.c_str(), p.name.c_str(), p.compute_major, p.compute_minor, p.multiprocessors,
                gib(p.total_memory), gib(p.free_memory), p.pci_bus_id.c_str());
  }
}

strata::Json to_json(const SystemReport& r) {
  using strata::Json;
  Json gpus = Json::array();
  for (const GpuReport& g : r.gpus) {
    Json j = Json::object({{"device", g.device.to_string()}});
    if (!g.error.empty()) {
      j.set("error", g.error);
    } else {
      const strata::gpu::DeviceProperties& p = g.properties;
      j.set("name", p.name);
      j.set("compute_capability", std::to_string(p.compute_major) + "." + std::to_string(p.compute_minor));
      j.set("multiprocessors", p.multiprocessors);
      j.set("total_memory_bytes", int64_t(p.total_memory));
      j.set("free_memory_bytes", int64_t(p.free_memory));
      j.set("pci_bus_id", p.pci_bus_id);
    }
    gpus.push_back(j);
  }
  // Versions a build or machine lacks are null, not "".
  auto version = [](const std::string& v) { return v.empty() ? Json() : Json(v); };
  Json out = Json::object({
      {"strata_version", r.strata_version},
      {"cuda_backend", r.built_with_cuda},
      {"cuda_runtime", version(r.cuda.cuda_runtime)},
      {"cuda_driver", version(r.cuda.cuda_driver)},
      {"cudnn_built", version(r.cuda.cudnn)},
      {"cudnn_loaded", version(r.cuda.cudnn_loaded)},
      {"cublas", version(r.cuda.cublas)},
      {"nccl", version(r.nccl_version)},
      {"onednn", version(r.onednn_version)},
      {"cpu_model", version(r.cpu_model)},
      {"cpu_cores", r.cpu_cores},
      {"intra_op_threads", r.intra_op_threads},
      {"host_memory_bytes", int64_t(r.host_memory_bytes)},
      {"cuda_visible_devices", r.cuda_visible_devices_set ? Json(r.cuda_visible_devices) : Json()},
      {"gpus", gpus},
  });
  if (r.gpus.empty()) out.set("no_gpu_reason", r.no_gpu_reason);
  return out;
}

int run(int argc, char** argv) {
  apps::parse_command_line(argc, argv,
                           "Prints the Strata build, the CUDA / cuDNN / cuBLAS / NCCL / oneDNN "
                           "versions, the CPU and every visible GPU with its memory.");
  const bool json = absl::GetFlag(FLAGS_json);
  const SystemReport report = strata_info::collect_system_report(STRATA_VERSION);
  if (json) {
    std::printf("%s\n", to_json(report).dump(2).c_str());
  } else {
    print_text(report);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return apps::guarded_main([&] { return run(argc, argv); });
}
