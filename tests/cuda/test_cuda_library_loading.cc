// The CUDA libraries are loaded when the first GPU needs them, not at start-up: a CUDA build
// training on the CPU maps none of cuBLAS(Lt), cuDNN or NCCL (they cost a CPU run hundreds of MB
// and kept the binary from starting where they are not installed), and a GPU convolution or
// matmul loads the library it needs. The CPU check runs in a fresh child process, since other
// tests of this binary may have used a GPU already.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <strata/strata.h>

#include "framework/backend/gpu_runtime.h"
#include "tests/cuda/gpu_test_utils.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/framework/saving/child_process_util.h"

namespace strata {
namespace {

// The lines of /proc/self/maps that map a library whose file name contains `name`.
std::string mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line, found;
  while (std::getline(maps, line)) {
    const size_t slash = line.rfind('/');
    if (slash != std::string::npos && line.find(name, slash) != std::string::npos) {
      found += line + "\n";
    }
  }
  return found;
}

constexpr const char* kGpuLibraries[] = {"libcublas", "libcudnn", "libnccl"};

// The child: a fresh process that lists the devices and trains on the CPU (the default device,
// GPU or not) the way a user's program would (a Conv2D + BatchNormalization + Dense model, fit
// and predict; without GPUs, MirroredStrategy's default over logical CPUs), then checks what it
// mapped.
TEST(CudaLibraryLoading, CpuTrainingChild) {
  if (std::getenv("STRATA_TEST_CPU_ONLY_CHILD") == nullptr) {
    GTEST_SKIP() << "run by CudaLibraryLoading.CpuTrainingMapsNoCudaLibrary in a child process";
  }
  for (const char* library : kGpuLibraries) {
    ASSERT_EQ(mapped(library), "") << library << " was mapped before main";
  }
  (void)config::list_physical_devices("GPU");
  (void)gpu::device_count();
  const testing::ClassifierData data = testing::classifier_data(16);
  auto model = testing::small_classifier("adam", testing::Norm::kBatchNorm);
  model->fit(data.x, data.y, FitOptions().batch_size(8).epochs(1).verbose(0));
  (void)model->predict(data.x);
  if (gpu::device_count() == 0) {
    distribute::MirroredStrategy strategy;  // no GPU: logical CPU replicas, no NCCL
    EXPECT_FALSE(strategy.worker_devices().empty());
  }
  for (const char* library : kGpuLibraries) {
    EXPECT_EQ(mapped(library), "") << library << " was loaded by a run on the CPU";
  }
}

TEST(CudaLibraryLoading, CpuTrainingMapsNoCudaLibrary) {
  if (std::getenv("STRATA_TEST_CPU_ONLY_CHILD") != nullptr) GTEST_SKIP() << "in the child";
  const std::string log = ::testing::TempDir() + "strata_cpu_only_child.log";
  const int status = testing::run_test_in_child("CudaLibraryLoading.CpuTrainingChild",
                                                {"STRATA_TEST_CPU_ONLY_CHILD=1"}, log, 300);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child " << testing::describe_status(status) << ":\n" << testing::tail_of(log);
  // Its test ran, rather than skipping.
  EXPECT_EQ(testing::tail_of(log).find("SKIPPED"), std::string::npos) << testing::tail_of(log);
}

// On a GPU: the first convolution loads cuDNN, the first matmul cuBLASLt.
TEST(CudaLibraryLoading, GpuOperationsLoadTheirLibraries) {
  STRATA_REQUIRE_GPU();
  const Device g = Device::gpu(0);
  Tensor x = random_normal({2, 8, 8, 3}, 0.0, 1.0, float32, 1).to(g);
  Tensor w = random_normal({3, 3, 3, 4}, 0.0, 1.0, float32, 2).to(g);
  (void)conv2d(x, w).to(Device::cpu());
  EXPECT_NE(mapped("libcudnn"), "");
  Tensor a = random_normal({4, 5}, 0.0, 1.0, float32, 3).to(g);
  Tensor b = random_normal({5, 6}, 0.0, 1.0, float32, 4).to(g);
  (void)matmul(a, b).to(Device::cpu());
  EXPECT_NE(mapped("libcublasLt"), "");
}

// strata-info's versions: those of the libraries loaded now, or empty where they cannot be
// loaded; never an exception. Where cuDNN loads, it is the major version Strata was built with.
TEST(CudaLibraryLoading, VersionsAreThoseLoadedOrEmpty) {
  const gpu::Versions v = gpu::versions();
  if (!gpu::built_with_cuda()) {
    EXPECT_EQ(v.cudnn_loaded, "");
    EXPECT_EQ(v.cublas, "");
    return;
  }
  if (!v.cudnn_loaded.empty()) {
    EXPECT_EQ(v.cudnn_loaded.substr(0, v.cudnn_loaded.find('.')),
              v.cudnn.substr(0, v.cudnn.find('.')));
  }
  if (!v.cublas.empty()) {
    EXPECT_EQ(v.cublas.substr(0, v.cublas.find('.')),
              v.cuda_runtime.substr(0, v.cuda_runtime.find('.')));
  }
}

}  // namespace
}  // namespace strata
