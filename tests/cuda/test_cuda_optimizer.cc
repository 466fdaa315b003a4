// The CUDA optimizer kernels against the CPU: every update rule over several steps at the
// backend level (the GPU spells out the CPU's float operations, so they agree to rounding or
// better), whole optimizers with clipping and weight decay, and the multi-tensor
// optimizer_update_many against per-variable updates on the GPU: many variables (more than one
// launch's table), empty ones, ones that straddle two launches, a repeated one.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/gpu_compare.h"
#include "cuda/gpu_test_utils.h"
#include "framework/backend/backend.h"
#include "framework/optimizers/update_rule_cases.h"

namespace strata {
namespace {

using testing::expect_values;
using testing::make_update_state;
using testing::update_cases;
using testing::UpdateState;

const Device kGpu = Device::gpu(0);
// The kernels repeat the CPU's operations in its order; the margin covers a CPU build that
// fuses multiply-adds (-march with FMA), which the GPU kernels never do.
constexpr double kRtol = 1e-6, kAtol = 1e-7;

void expect_states(const UpdateState& actual, const UpdateState& expected, const std::string& what,
                   double rtol, double atol) {
  expect_values(actual.var, expected.var, rtol, atol, what + ": variable");
  ASSERT_EQ(actual.slots.size(), expected.slots.size()) << what;
  for (size_t k = 0; k < actual.slots.size(); ++k) {
    expect_values(actual.slots[k], expected.slots[k], rtol, atol, what + ": slot " + std::to_string(k));
  }
}

void update_many(Backend& backend, const OptimizerUpdate& u, std::vector<UpdateState>& states) {
  std::vector<Tensor*> vars;
  std::vector<Tensor> grads;
  std::vector<std::vector<Tensor>*> slots;
  for (UpdateState& s : states) {
    vars.push_back(&s.var);
    grads.push_back(s.grad);
    slots.push_back(&s.slots);
  }
  backend.optimizer_update_many(u, vars, grads, slots);
}

TEST(CudaOptimizer, EveryRuleMatchesTheCpuOverSeveralSteps) {
  STRATA_REQUIRE_GPU();
  Backend& cpu = backend_for(Device::cpu());
  Backend& gpu = backend_for(kGpu);
  for (const testing::UpdateCase& c : update_cases()) {
    for (int64_t n : {int64_t(1), int64_t(1000), int64_t(300001)}) {
      UpdateState on_cpu = make_update_state(c.u, n, 5);
      UpdateState on_gpu = on_cpu.to(kGpu);
      for (int step = 0; step < 5; ++step) {
        // A fresh gradient each step, the same on both devices.
        const Tensor g = random_uniform({n}, -1, 1, float32, 1000 + step, Device::cpu());
        on_cpu.grad = g;
        on_gpu.grad = g.to(kGpu);
        OptimizerUpdate u = c.u;
        u.step = c.u.step + step;
        cpu.optimizer_update(u, on_cpu.var, on_cpu.grad, on_cpu.slots);
        gpu.optimizer_update(u, on_gpu.var, on_gpu.grad, on_gpu.slots);
      }
      EXPECT_EQ(on_gpu.var.device(), kGpu);
      expect_states(on_gpu, on_cpu, c.name + ", " + std::to_string(n) + " elements", kRtol, kAtol);
    }
  }
}

TEST(CudaOptimizer, NanGradientsStayNanAsOnTheCpu) {
  STRATA_REQUIRE_GPU();
  for (const testing::UpdateCase& c : update_cases()) {
    UpdateState on_cpu = make_update_state(c.u, 4, 7);
    on_cpu.grad = tensor({std::nanf(""), 1.0f, -std::numeric_limits<float>::infinity(), 0.5f});
    UpdateState on_gpu = on_cpu.to(kGpu);
    backend_for(Device::cpu()).optimizer_update(c.u, on_cpu.var, on_cpu.grad, on_cpu.slots);
    backend_for(kGpu).optimizer_update(c.u, on_gpu.var, on_gpu.grad, on_gpu.slots);
    expect_states(on_gpu, on_cpu, c.name, kRtol, kAtol);
  }
}

TEST(CudaOptimizer, UpdateManyEqualsPerVariableUpdates) {
  STRATA_REQUIRE_GPU();
  Backend& gpu = backend_for(kGpu);
  // 45 variables (more than one table's 36), empty ones, one exactly a chunk (65536), one a
  // chunk and one element, and 21.5M elements: more chunks than one launch's 320 blocks, so it
  // straddles launches.
  std::vector<int64_t> sizes = {0, 1, 65536, 65537, 21500000, 0, 3};
  for (int i = 0; i < 38; ++i) sizes.push_back(17 * i + 5);
  for (const testing::UpdateCase& c : update_cases()) {
    std::vector<UpdateState> one_by_one, together;
    for (size_t i = 0; i < sizes.size(); ++i) {
      // Large variables are filled on the GPU; the state helper makes CPU tensors.
      UpdateState s = make_update_state(c.u, sizes[i] > 100000 ? 1 : sizes[i], int64_t(7 * i + 1));
      if (sizes[i] > 100000) {
        s.var = random_uniform({sizes[i]}, -1, 1, float32, 1, kGpu);
        s.grad = random_uniform({sizes[i]}, -1, 1, float32, 2, kGpu);
        for (size_t k = 0; k < s.slots.size(); ++k) {
          s.slots[k] = random_uniform({sizes[i]}, 0.5, 1.5, float32, int64_t(3 + k), kGpu);
        }
        if (c.u.kind == OptimizerKind::kRMSprop && c.u.centered) {
          s.slots[1] = random_uniform({sizes[i]}, -0.3, 0.3, float32, 9, kGpu);
        }
      }
      one_by_one.push_back(s.to(kGpu));
      together.push_back(one_by_one.back().clone());
    }
    for (int step = 0; step < 2; ++step) {
      for (UpdateState& s : one_by_one) gpu.optimizer_update(c.u, s.var, s.grad, s.slots);
      update_many(gpu, c.u, together);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      expect_states(together[i], one_by_one[i], c.name + ", variable " + std::to_string(i), 0.0, 0.0);
    }
  }
}

TEST(CudaOptimizer, UpdateManyWithARepeatedVariableUpdatesItInOrder) {
  STRATA_REQUIRE_GPU();
  Backend& gpu = backend_for(kGpu);
  for (const testing::UpdateCase& c : update_cases()) {
    UpdateState twice = make_update_state(c.u, 70000, 3).to(kGpu);
    UpdateState sequential = twice.clone();
    const Tensor second = random_uniform({70000}, -1, 1, float32, 4, kGpu);
    gpu.optimizer_update_many(c.u, {&twice.var, &twice.var}, {twice.grad, second},
                              {&twice.slots, &twice.slots});
    gpu.optimizer_update(c.u, sequential.var, sequential.grad, sequential.slots);
    gpu.optimizer_update(c.u, sequential.var, second, sequential.slots);
    expect_states(twice, sequential, c.name, 0.0, 0.0);
  }
}

TEST(CudaOptimizer, RejectsNonFloat32LikeTheCpu) {
  STRATA_REQUIRE_GPU();
  OptimizerUpdate u;
  std::vector<Tensor> slots;
  Tensor var = zeros({4}, float16, kGpu);
  const Tensor grad = zeros({4}, float16, kGpu);
  EXPECT_THROW(backend_for(kGpu).optimizer_update(u, var, grad, slots), DTypeError);
  EXPECT_THROW(backend_for(kGpu).optimizer_update_many(u, {&var}, {grad}, {&slots}), DTypeError);
}

// Whole optimizers (schedules, clipping, decay, slot creation) on the GPU and on the CPU.
struct OptimizerCase {
  std::string name;
  std::function<std::unique_ptr<optimizers::Optimizer>()> make;
};

template <typename O, typename Options>
OptimizerCase make_case(const std::string& name, double lr, Options options) {
  return {name, [lr, options] { return std::unique_ptr<optimizers::Optimizer>(new O(lr, options)); }};
}

std::vector<OptimizerCase> optimizer_cases() {
  using namespace optimizers;
  return {
      make_case<SGD>("sgd", 0.1, SGDOptions()),
      make_case<SGD>("sgd nesterov clipvalue", 0.1, SGDOptions().momentum(0.9).nesterov(true).clipvalue(0.3)),
      make_case<Adam>("adam", 0.01, AdamOptions()),
      make_case<Adam>("adam amsgrad clipnorm", 0.01, AdamOptions().amsgrad(true).clipnorm(0.5)),
      make_case<AdamW>("adamw", 0.01, AdamWOptions().weight_decay(0.05)),
      make_case<RMSprop>("rmsprop centered momentum global_clipnorm", 0.01,
                         RMSpropOptions().centered(true).momentum(0.5).global_clipnorm(1.0)),
      make_case<Adagrad>("adagrad", 0.1, AdagradOptions()),
  };
}

TEST(CudaOptimizer, OptimizersMatchTheCpuOverSeveralSteps) {
  STRATA_REQUIRE_GPU();
  for (const OptimizerCase& c : optimizer_cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<Shape> shapes = {{30, 20}, {20}, {5, 5, 3, 8}, {1}};
    std::vector<VariablePtr> cpu_vars, gpu_vars;
    std::unique_ptr<optimizers::Optimizer> cpu_opt, gpu_opt;
    for (size_t i = 0; i < shapes.size(); ++i) {
      VariableSpec spec;
      spec.name = "v" + std::to_string(i);
      spec.shape = shapes[i];
      spec.initial_value = random_uniform(shapes[i], -1, 1, float32, int64_t(i), Device::cpu());
      spec.device = Device::cpu();
      cpu_vars.push_back(create_variable(spec));
      spec.device = kGpu;
      gpu_vars.push_back(create_variable(spec));
    }
    {
      DeviceScope cpu_scope(Device::cpu());
      cpu_opt = c.make();
    }
    {
      DeviceScope gpu_scope(kGpu);  // the step counter on the GPU too
      gpu_opt = c.make();
    }
    for (int step = 0; step < 5; ++step) {
      std::vector<Tensor> cpu_grads, gpu_grads;
      for (size_t i = 0; i < shapes.size(); ++i) {
        cpu_grads.push_back(random_uniform(shapes[i], -2, 2, float32, 100 * step + int64_t(i), Device::cpu()));
        gpu_grads.push_back(cpu_grads.back().to(kGpu));
      }
      cpu_opt->apply_gradients(cpu_grads, cpu_vars);
      gpu_opt->apply_gradients(gpu_grads, gpu_vars);
    }
    // Norms for clipping are sums in another order on the GPU: a looser margin.
    for (size_t i = 0; i < shapes.size(); ++i) {
      EXPECT_EQ(gpu_vars[i]->device(), kGpu);
      expect_values(gpu_vars[i]->value(), cpu_vars[i]->value(), 1e-5, 1e-6, cpu_vars[i]->name());
    }
    const std::vector<VariablePtr> cpu_state = cpu_opt->variables(), gpu_state = gpu_opt->variables();
    ASSERT_EQ(gpu_state.size(), cpu_state.size());
    for (size_t k = 0; k < cpu_state.size(); ++k) {
      expect_values(gpu_state[k]->value(), cpu_state[k]->value(), 1e-5, 1e-6, cpu_state[k]->name());
    }
  }
}

}  // namespace
}  // namespace strata
