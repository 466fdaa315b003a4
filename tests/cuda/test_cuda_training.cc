// End to end on GPUs: a small model trained on /gpu:0 against the same model on the CPU, fit
// with batches moved to the model's device, and MirroredStrategy over every GPU with NCCL
// against one device. Skipped (one line) without a GPU.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "distribute/collectives/nccl_support.h"
#include "tests/cuda/dnn_test_utils.h"  // Tf32Scope
#include "tests/cuda/gpu_test_utils.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata {
namespace {

// Trains small_classifier for two epochs on `device` (TF32 off: the GPU then differs from the CPU
// only in summation order) and returns its weights and loss history.
struct TrainedRun {
  std::vector<Tensor> weights;
  std::vector<double> loss;
};
TrainedRun train_on(Device device, const testing::ClassifierData& data) {
  config::enable_tensor_float_32_execution(false);
  std::shared_ptr<Sequential> model;
  {
    DeviceScope scope(device);
    model = testing::small_classifier("adam", testing::Norm::kBatchNorm);
  }
  EXPECT_EQ(model->device(), device);
  const History h = model->fit(data.x, data.y, FitOptions().batch_size(8).epochs(2).verbose(0).shuffle(false));
  TrainedRun run;
  for (const auto& w : model->get_weights()) run.weights.push_back(w.to(Device::cpu()));
  run.loss = h.history.at("loss");
  config::enable_tensor_float_32_execution(true);
  return run;
}

TEST(CudaTraining, SmallModelOnGpuMatchesCpu) {
  STRATA_REQUIRE_GPU();
  const testing::ClassifierData data = testing::classifier_data(32);
  const TrainedRun cpu = train_on(Device::cpu(), data);
  const TrainedRun gpu = train_on(Device::gpu(0), data);
  // Weight 1 is the bias of the conv that BatchNormalization follows: BN subtracts the batch
  // mean, so that bias's gradient is exactly 0 and what the backward pass computes is rounding
  // noise (about 1e-8), different in each summation order. Adam divides by the gradient's own
  // size, so noise moves it by up to its learning rate (1e-3) per step either way: on an H200
  // the GPU's and the CPU's ended 2.5e-4 apart. It is held to that bound (8 steps); every other
  // weight must match.
  ASSERT_EQ(gpu.weights.size(), cpu.weights.size());
  ASSERT_GT(cpu.weights.size(), 2u);
  std::vector<Tensor> gpu_rest = gpu.weights, cpu_rest = cpu.weights;
  gpu_rest.erase(gpu_rest.begin() + 1);
  cpu_rest.erase(cpu_rest.begin() + 1);
  testing::expect_weights_near(gpu_rest, cpu_rest, 1e-3, 1e-4);
  const int64_t steps = 2 * (32 / 8);
  testing::expect_weights_near({gpu.weights[1]}, {cpu.weights[1]}, 0.0, 2.0 * steps * 1e-3);
  ASSERT_EQ(gpu.loss.size(), cpu.loss.size());
  for (size_t e = 0; e < cpu.loss.size(); ++e) EXPECT_NEAR(gpu.loss[e], cpu.loss[e], 1e-3);
  EXPECT_LT(gpu.loss.back(), gpu.loss.front());  // it learned
}

TEST(CudaTraining, PredictAndEvaluateOnGpuReturnHostResults) {
  STRATA_REQUIRE_GPU();
  const testing::ClassifierData data = testing::classifier_data(20);
  std::shared_ptr<Sequential> model;
  {
    DeviceScope scope(Device::gpu(0));
    model = testing::small_classifier();
  }
  const Tensor p = model->predict(data.x, PredictOptions().batch_size(8).verbose(0));
  EXPECT_EQ(p.device(), Device::cpu());
  EXPECT_EQ(p.shape(), (Shape{20, 3}));
  const auto scores = model->evaluate(data.x, data.y, EvaluateOptions().batch_size(8).verbose(0));
  EXPECT_TRUE(std::isfinite(scores.at("loss")));
}

TEST(CudaTraining, MirroredOverEveryGpuWithNcclMatchesOneDevice) {
  STRATA_REQUIRE_GPU();
  const int n = gpu::device_count();
  const testing::ClassifierData data = testing::classifier_data(8 * n * 4);
  testing::Tf32Scope exact(false);
  distribute::MirroredStrategy strategy;  // every GPU, NCCL
  ASSERT_EQ(strategy.num_replicas_in_sync(), n);
  EXPECT_EQ(strategy.cross_device_ops().name(), "NcclAllReduce");
  std::shared_ptr<Sequential> mirrored;
  {
    distribute::Strategy::Scope scope(strategy.scope());
    mirrored = testing::small_classifier();
  }
  mirrored->fit(data.x, data.y, FitOptions().batch_size(8 * n).epochs(2).verbose(0).shuffle(false));
  std::shared_ptr<Sequential> single;
  {
    DeviceScope scope(Device::gpu(0));
    single = testing::small_classifier();
  }
  single->fit(data.x, data.y, FitOptions().batch_size(8 * n).epochs(2).verbose(0).shuffle(false));
  std::vector<Tensor> a, b;
  for (const auto& w : mirrored->get_weights()) a.push_back(w.to(Device::cpu()));
  for (const auto& w : single->get_weights()) b.push_back(w.to(Device::cpu()));
  testing::expect_weights_near(a, b, 1e-4, 1e-5);
}

TEST(CudaTraining, MirroredStrategyScopeBuildsOnTheFirstGpu) {
  STRATA_REQUIRE_GPU();
  // Code in the scope but outside the replicas reads each variable's first copy, on /gpu:0:
  // the scope makes that the default device, so Sequential::build's zeros land there (on an
  // H200 they were on /cpu:0: "conv2d: x and filters are on different devices").
  distribute::MirroredStrategy strategy;
  {
    distribute::Strategy::Scope scope(strategy.scope());
    EXPECT_EQ(default_device(), Device::gpu(0));
    std::shared_ptr<Sequential> model = testing::small_classifier();
    EXPECT_EQ(model->device(), Device::gpu(0));
  }
  EXPECT_EQ(default_device(), Device::cpu(0));
}

TEST(CudaTraining, NcclCollectivesAcrossEveryGpu) {
  STRATA_REQUIRE_GPU();
  if (!distribute::nccl_available()) GTEST_SKIP() << "GPU test: built without NCCL";
  const int n = gpu::device_count();
  std::vector<Device> devices;
  for (int i = 0; i < n; ++i) devices.push_back(Device::gpu(i));
  auto group = distribute::make_nccl_group(devices);
  std::vector<Tensor> sums(static_cast<size_t>(n)), gathered(static_cast<size_t>(n)),
      bcast(static_cast<size_t>(n));
  testing::on_ranks(*group, [&](int r, distribute::Communicator& comm) {
    Tensor t = Tensor::from_vector(std::vector<float>{float(r), 1.f, -2.f}, Shape{3}).to(devices[size_t(r)]);
    comm.all_reduce(t, ReduceOp::kSum);
    sums[size_t(r)] = t.to(Device::cpu());
    Tensor mean = Tensor::from_vector(std::vector<float>{float(r)}, Shape{1}).to(devices[size_t(r)]);
    auto work = comm.all_reduce_async(mean, ReduceOp::kMean);
    work->wait();
    Tensor b = Tensor::from_vector(std::vector<float>{float(r) + 10.f}, Shape{1}).to(devices[size_t(r)]);
    comm.broadcast(b, n - 1);
    bcast[size_t(r)] = b.to(Device::cpu());
    gathered[size_t(r)] =
        comm.all_gather(Tensor::from_vector(std::vector<float>{float(r)}, Shape{1}).to(devices[size_t(r)]))
            .to(Device::cpu());
    comm.barrier();
  });
  const float sum_r = float(n * (n - 1) / 2);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(sums[size_t(r)].to_vector<float>(), (std::vector<float>{sum_r, float(n), -2.f * float(n)}));
    EXPECT_EQ(bcast[size_t(r)].to_vector<float>(), (std::vector<float>{float(n - 1) + 10.f}));
    ASSERT_EQ(gathered[size_t(r)].numel(), n);
    for (int k = 0; k < n; ++k) EXPECT_EQ(gathered[size_t(r)].to_vector<float>()[size_t(k)], float(k));
  }
}

}  // namespace
}  // namespace strata
