// Which communicator group a strategy gets on which devices, the host-staged group's collectives,
// and the errors for GPU devices and NCCL where there are none. (NCCL across real GPUs:
// tests/cuda/test_cuda_mirrored.cc.)
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <strata/strata.h>

#include "distribute/collectives/host_staged_group.h"
#include "distribute/collectives/in_process_communicator.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::distribute {
namespace {

using testing::on_ranks;

TEST(CommunicatorGroups, DefaultGroupOnCpusIsInProcess) {
  auto group = make_default_group({Device::cpu(0), Device::cpu(1)});
  EXPECT_NE(dynamic_cast<InProcessGroup*>(group.get()), nullptr);
  EXPECT_EQ(group->world_size(), 2);
}

TEST(CommunicatorGroups, DefaultGroupWithAGpuStagesThroughTheHost) {
  auto group = make_default_group({Device::gpu(0), Device::gpu(1)});
  EXPECT_NE(dynamic_cast<HostStagedGroup*>(group.get()), nullptr);
}

// The host-staged path copies to the host, meets there and copies back: on CPU tensors it must
// give what the in-process group gives.
TEST(CommunicatorGroups, HostStagedCollectivesMatchInProcess) {
  HostStagedGroup staged(3);
  std::vector<Tensor> sums(3), bcast(3), gathered(3), scattered(3);
  on_ranks(staged, [&](int r, Communicator& comm) {
    Tensor t = Tensor::from_vector(std::vector<float>{float(r), 1.f, 2.f * float(r), -1.f}, Shape{4});
    comm.all_reduce(t, ReduceOp::kSum);
    sums[size_t(r)] = t;
    Tensor b = Tensor::from_vector(std::vector<float>{float(r), float(r)}, Shape{2});
    comm.broadcast(b, 2);
    bcast[size_t(r)] = b;
    gathered[size_t(r)] = comm.all_gather(Tensor::from_vector(std::vector<float>{float(r)}, Shape{1}));
    scattered[size_t(r)] =
        comm.reduce_scatter(Tensor::from_vector(std::vector<float>{1.f, 2.f, 3.f}, Shape{3}),
                            ReduceOp::kSum);
    auto work = comm.all_reduce_async(t, ReduceOp::kMax);
    work->wait();
    EXPECT_TRUE(work->done());
    comm.barrier();
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(sums[size_t(r)].to_vector<float>(), (std::vector<float>{3.f, 3.f, 6.f, -3.f}));
    EXPECT_EQ(bcast[size_t(r)].to_vector<float>(), (std::vector<float>{2.f, 2.f}));
    EXPECT_EQ(gathered[size_t(r)].to_vector<float>(), (std::vector<float>{0.f, 1.f, 2.f}));
    EXPECT_EQ(scattered[size_t(r)].to_vector<float>(), (std::vector<float>{3.f * float(r + 1)}));
  }
}

TEST(CommunicatorGroups, HostStagedAbortFailsPendingCollectives) {
  HostStagedGroup staged(2);
  staged.abort("replica 1 failed");
  Tensor t = Tensor::from_vector(std::vector<float>{1.f}, Shape{1});
  testing::expect_error<CollectiveError>([&] { staged.communicator(0)->all_reduce(t, ReduceOp::kSum); },
                        {"replica 1 failed"});
}

TEST(CommunicatorGroups, GpuDevicesThatDoNotExistAreNamed) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "this machine has GPUs";
  testing::expect_error<ValueError>([] { MirroredStrategy({"/gpu:0", "/gpu:1"}); },
                        {"MirroredStrategy", "'/gpu:0' does not exist", "/cpu:0"});
}

TEST(CommunicatorGroups, MirroredWithoutArgumentsUsesGpusElseLogicalCpus) {
  MirroredStrategy strategy;
  const std::vector<Device> devices = strategy.worker_devices();
  ASSERT_FALSE(devices.empty());
  if (gpu::device_count() > 0) {
    EXPECT_EQ(int(devices.size()), gpu::device_count());
    EXPECT_EQ(devices[0], Device::gpu(0));
  } else {
    EXPECT_EQ(devices, config::list_logical_devices("CPU"));
    EXPECT_EQ(strategy.cross_device_ops().name(), "ReductionToOneDevice");
  }
}

TEST(CommunicatorGroups, NcclNeedsGpuDevices) {
  if (!nccl_available()) {
    testing::expect_error<ValueError>([] { NcclAllReduce(); }, {"NcclAllReduce", "no NCCL"});
    return;
  }
  // NCCL is loaded at run time: the version is known where libnccl can be loaded.
  if (void* libnccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL)) {
    EXPECT_FALSE(nccl_version().empty());
    dlclose(libnccl);
  }
  config::set_logical_cpu_devices(2);
  testing::expect_error<ValueError>(
      [] { MirroredStrategy({"/cpu:0", "/cpu:1"}, std::make_shared<NcclAllReduce>()); },
      {"NcclAllReduce", "/cpu:0", "is not a GPU"});
  config::set_logical_cpu_devices(1);
  testing::expect_error<ValueError>([] { NcclAllReduce(0); }, {"num_packs must be >= 1"});
}

}  // namespace
}  // namespace strata::distribute
