// The machinery under the local strategies: replica threads with their context, device and
// thread share; errors on one replica abort the others' collectives; bucketed gradient sums.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>

#include <strata/strata.h>

namespace strata::testing {
namespace {

std::vector<float> floats(const Tensor& t) { return t.to_vector<float>(); }

class ReplicaRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    threads_ = get_num_threads();
    set_num_threads(4);
    config::set_logical_cpu_devices(2);
  }
  void TearDown() override {
    config::set_logical_cpu_devices(1);
    set_num_threads(threads_);
  }
  int threads_ = 1;
};

TEST_F(ReplicaRuntime, DeviceScopePlacesNewTensors) {
  EXPECT_EQ(default_device(), Device::cpu(0));
  {
    DeviceScope on(Device::cpu(1));
    EXPECT_EQ(zeros({2}).device(), Device::cpu(1));
    // Logical CPU devices share host memory: ops mix them freely.
    Tensor mixed = add(zeros({2}), ones({2}, float32, Device::cpu(0)));
    EXPECT_EQ(mixed.to_vector<float>(), (std::vector<float>{1, 1}));
  }
  EXPECT_EQ(zeros({2}).device(), Device::cpu(0));
}

TEST_F(ReplicaRuntime, EachReplicaHasItsContextDeviceAndThreadShare) {
  distribute::MirroredStrategy strategy;
  ASSERT_EQ(strategy.num_replicas_in_sync(), 2);
  std::vector<int> ids(2, -1), shares(2, -1);
  std::vector<Device> devices(2);
  std::vector<int> scoped(2, 0);
  strategy.run_replicas([&](int r) {
    ids[size_t(r)] = distribute::current_replica_context()->replica_id_in_sync_group();
    shares[size_t(r)] = thread_share();
    devices[size_t(r)] = default_device();
    scoped[size_t(r)] = distribute::current_strategy() == &strategy;
  });
  EXPECT_EQ(ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(shares, (std::vector<int>{2, 2}));  // 4 threads over 2 logical devices
  EXPECT_EQ(devices, (std::vector<Device>{Device::cpu(0), Device::cpu(1)}));
  EXPECT_EQ(scoped, (std::vector<int>{1, 1}));
  EXPECT_EQ(thread_share(), 0);  // the caller is back on the global count
  EXPECT_EQ(distribute::current_replica_context(), nullptr);
}

TEST_F(ReplicaRuntime, AFailingReplicaAbortsTheOthersAndTheStrategyRecovers) {
  distribute::MirroredStrategy strategy;
  const auto start = std::chrono::steady_clock::now();
  try {
    strategy.run_replicas([&](int r) {
      if (r == 1) throw ValueError("replica one failed on purpose");
      Tensor t = ones({3});
      distribute::current_replica_context()->all_reduce(t, ReduceOp::kSum);  // would wait forever
    });
    FAIL() << "expected the replica's error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("on purpose"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  // A fresh group: collectives work again.
  std::vector<float> sums(2);
  strategy.run_replicas([&](int r) {
    Tensor t = full({1}, double(r + 1));
    distribute::current_replica_context()->all_reduce(t, ReduceOp::kSum);
    sums[size_t(r)] = t.item<float>();
  });
  EXPECT_EQ(sums, (std::vector<float>{3.0f, 3.0f}));
}

TEST_F(ReplicaRuntime, BucketedGradientsAreTheSumOverReplicas) {
  distribute::MirroredStrategy strategy;
  for (size_t bucket_bytes : {size_t(1), size_t(24), distribute::kDefaultGradientBucketBytes}) {
    std::vector<VariablePtr> vars;
    {
      auto scope = strategy.scope();
      for (int k = 0; k < 5; ++k) {
        VariableSpec spec;
        spec.name = "w" + std::to_string(k);
        spec.shape = Shape{k + 1};
        spec.initial_value = full(Shape{k + 1}, double(k + 1));
        vars.push_back(create_variable(spec));
      }
    }
    std::vector<std::vector<Gradient>> grads(2);
    strategy.run_replicas([&](int r) {
      GradientTape tape;
      Tensor loss;
      for (size_t k = 0; k < vars.size(); ++k) {
        Tensor term = reduce_sum(vars[k]->value() * vars[k]->value()) * double(r + 1);
        loss = loss.defined() ? loss + term : term;
      }
      grads[size_t(r)] = distribute::compute_reduced_gradients(tape, loss, vars, bucket_bytes);
    });
    for (size_t k = 0; k < vars.size(); ++k) {
      // d/dw (w^2 * (r+1)) summed over r = 1, 2: 2w * 3 = 6 (k+1).
      const std::vector<float> want(k + 1, 6.0f * float(k + 1));
      EXPECT_EQ(grads[0][k].dense().to_vector<float>(), want) << "bucket " << bucket_bytes << " var " << k;
      EXPECT_EQ(grads[1][k].dense().to_vector<float>(), want) << "bucket " << bucket_bytes << " var " << k;
    }
  }
}

// Each replica draws its own stream (replica 0 continues the global one): dropout under a
// strategy is reproducible whatever the threads' timing, and one replica draws what no strategy
// would.
std::vector<Tensor> train_with_dropout(distribute::Strategy* strategy, int64_t dropout_seed) {
  set_random_seed(99);
  std::optional<distribute::Strategy::Scope> scope;
  if (strategy) scope.emplace(strategy);
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(16, "relu"), std::make_shared<Dropout>(0.5, dropout_seed), std::make_shared<Dense>(2)});
  model->build({-1, 4});
  model->compile("sgd", "mse");
  scope.reset();
  Tensor x = random_normal({32, 4}, 0.0, 1.0, float32, 5);
  Tensor y = random_normal({32, 2}, 0.0, 1.0, float32, 6);
  model->fit(x, y, FitOptions().epochs(2).batch_size(8).shuffle(false).verbose(0));
  return model->get_weights();
}

TEST_F(ReplicaRuntime, DropoutUnderAStrategyIsReproducible) {
  for (int64_t seed : {int64_t(-1), int64_t(7)}) {  // global generator; the layer's own seed
    SCOPED_TRACE("dropout seed " + std::to_string(seed));
    distribute::MirroredStrategy mirrored;
    const std::vector<Tensor> a = train_with_dropout(&mirrored, seed);
    for (int run = 0; run < 3; ++run) {
      const std::vector<Tensor> b = train_with_dropout(&mirrored, seed);
      for (size_t w = 0; w < a.size(); ++w) EXPECT_EQ(floats(a[w]), floats(b[w])) << w;
    }
    distribute::OneDeviceStrategy one("/cpu:1");
    const std::vector<Tensor> c = train_with_dropout(&one, seed);
    const std::vector<Tensor> d = train_with_dropout(nullptr, seed);
    for (size_t w = 0; w < c.size(); ++w) EXPECT_EQ(floats(c[w]), floats(d[w])) << w;
  }
}

// train_on_batch / test_on_batch / predict_on_batch take one batch of any size: it is split as
// evenly as it goes (TensorFlow does the same), with the result of the whole batch.
TEST_F(ReplicaRuntime, OnBatchMethodsAcceptBatchesThatDoNotDivide) {
  Tensor x = random_normal({3, 4}, 0.0, 1.0, float32, 11);
  Tensor y = random_normal({3, 2}, 0.0, 1.0, float32, 12);
  const auto make = [] {
    set_random_seed(5);
    auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(2)});
    model->build({-1, 4});
    model->compile("sgd", "mse");
    return model;
  };
  auto plain = make();
  distribute::MirroredStrategy strategy;
  std::shared_ptr<Sequential> mirrored;
  {
    auto scope = strategy.scope();
    mirrored = make();
  }
  EXPECT_EQ(floats(mirrored->predict_on_batch(x)), floats(plain->predict_on_batch(x)));
  const double want_test = plain->test_on_batch(x, y).at("loss");
  EXPECT_NEAR(mirrored->test_on_batch(x, y).at("loss"), want_test, 1e-6);
  const double want = plain->train_on_batch(x, y).at("loss");
  EXPECT_NEAR(mirrored->train_on_batch(x, y).at("loss"), want, 1e-6);
  const std::vector<Tensor> a = mirrored->get_weights(), b = plain->get_weights();
  for (size_t w = 0; w < a.size(); ++w) {
    const std::vector<float> fa = floats(a[w]), fb = floats(b[w]);
    for (size_t i = 0; i < fa.size(); ++i) EXPECT_NEAR(fa[i], fb[i], 1e-6) << w;
  }
}

}  // namespace
}  // namespace strata::testing
