// Backend::optimizer_update_many (the fused multi-variable update) on the CPU, where the default
// runs optimizer_update per variable: identical results to per-variable updates for every rule,
// repeated variables updated in order; and Optimizer::apply_gradients, which groups variables by
// hyper-parameters into such calls, giving exactly what one-variable-at-a-time updates give.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "framework/backend/backend.h"
#include "optimizer_test_util.h"
#include "update_rule_cases.h"

namespace strata {
namespace {

using testing::make_update_state;
using testing::update_cases;
using testing::UpdateState;

void expect_identical(const Tensor& a, const Tensor& b, const std::string& what) {
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>()) << what;
}

// Runs optimizer_update_many over `states` (one call) and returns them.
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

TEST(OptimizerUpdateMany, CpuDefaultEqualsPerVariableUpdates) {
  Backend& cpu = backend_for(Device::cpu());
  const std::vector<int64_t> sizes = {1, 7, 0, 1000, 33, 20000};
  for (const testing::UpdateCase& c : update_cases()) {
    std::vector<UpdateState> one_by_one, together;
    for (size_t i = 0; i < sizes.size(); ++i) {
      one_by_one.push_back(make_update_state(c.u, sizes[i], int64_t(10 * i + 1)));
      together.push_back(one_by_one.back().clone());
    }
    for (int step = 0; step < 3; ++step) {
      for (UpdateState& s : one_by_one) cpu.optimizer_update(c.u, s.var, s.grad, s.slots);
      update_many(cpu, c.u, together);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::string what = c.name + ", variable " + std::to_string(i);
      expect_identical(together[i].var, one_by_one[i].var, what);
      ASSERT_EQ(together[i].slots.size(), testing::slot_count(c.u)) << what;
      for (size_t k = 0; k < together[i].slots.size(); ++k) {
        expect_identical(together[i].slots[k], one_by_one[i].slots[k], what + ", slot " + std::to_string(k));
      }
    }
    // The values really moved (a case whose update did nothing would prove nothing).
    EXPECT_NE(together[1].var.to_vector<float>(), make_update_state(c.u, 7, 11).var.to_vector<float>())
        << c.name;
  }
}

TEST(OptimizerUpdateMany, RepeatedVariableIsUpdatedTwiceInOrder) {
  Backend& cpu = backend_for(Device::cpu());
  for (const testing::UpdateCase& c : update_cases()) {
    UpdateState twice = make_update_state(c.u, 50, 3);
    UpdateState sequential = twice.clone();
    const Tensor second_grad = random_uniform({50}, -1, 1, float32, 99, Device::cpu());
    cpu.optimizer_update_many(c.u, {&twice.var, &twice.var}, {twice.grad, second_grad},
                              {&twice.slots, &twice.slots});
    cpu.optimizer_update(c.u, sequential.var, sequential.grad, sequential.slots);
    cpu.optimizer_update(c.u, sequential.var, second_grad, sequential.slots);
    expect_identical(twice.var, sequential.var, c.name);
  }
}

TEST(OptimizerUpdateMany, EmptyListDoesNothing) {
  OptimizerUpdate u;
  EXPECT_NO_THROW(backend_for(Device::cpu()).optimizer_update_many(u, {}, {}, {}));
}

// Four variables, named like Dense layers' so exclude_from_weight_decay("bias") splits them into
// two hyper-parameter groups.
std::vector<VariablePtr> dense_variables(const std::string& prefix) {
  using testing::make_var;
  return {make_var(prefix + "dense/kernel", {0.5f, -0.25f, 1.0f, 2.0f}, Shape{2, 2}),
          make_var(prefix + "dense/bias", {0.1f, -0.2f}),
          make_var(prefix + "dense_1/kernel", {-1.5f, 0.75f, 0.3f}),
          make_var(prefix + "dense_1/bias", {0.05f})};
}

std::vector<Tensor> step_gradients(const std::vector<VariablePtr>& vars, int step) {
  std::vector<Tensor> grads;
  for (size_t i = 0; i < vars.size(); ++i) {
    grads.push_back(random_uniform(vars[i]->shape(), -1, 1, float32, int64_t(100 * step + i),
                                   Device::cpu()));
  }
  return grads;
}

// Applies three steps with one optimizer for all variables and with one optimizer per variable
// (the pre-grouping behaviour, one kernel call per variable); both must agree bit for bit.
template <typename MakeOptimizer>
void expect_grouped_equals_separate(const char* what, MakeOptimizer make) {
  SCOPED_TRACE(what);
  const std::vector<VariablePtr> grouped = dense_variables("a/");
  const std::vector<VariablePtr> separate = dense_variables("b/");
  std::unique_ptr<optimizers::Optimizer> all = make();
  std::vector<std::unique_ptr<optimizers::Optimizer>> each;
  for (size_t i = 0; i < separate.size(); ++i) each.push_back(make());
  for (int step = 0; step < 3; ++step) {
    const std::vector<Tensor> grads = step_gradients(grouped, step);
    all->apply_gradients(grads, grouped);
    for (size_t i = 0; i < separate.size(); ++i) each[i]->apply_gradients({grads[i]}, {separate[i]});
  }
  for (size_t i = 0; i < grouped.size(); ++i) {
    expect_identical(grouped[i]->value(), separate[i]->value(), grouped[i]->name());
  }
}

TEST(OptimizerUpdateMany, GroupedApplyGradientsEqualsOneVariableAtATime) {
  // Weight decay on kernels only: two groups with different hyper-parameters.
  expect_grouped_equals_separate("adamw excluding biases", [] {
    auto opt = std::make_unique<optimizers::AdamW>(0.01, optimizers::AdamWOptions().weight_decay(0.1));
    opt->exclude_from_weight_decay({"bias"});
    return std::unique_ptr<optimizers::Optimizer>(std::move(opt));
  });
  // clipnorm: a gradient scale of each variable's own, so every variable is a group of its own.
  expect_grouped_equals_separate("rmsprop clipnorm", [] {
    return std::unique_ptr<optimizers::Optimizer>(std::make_unique<optimizers::RMSprop>(
        0.01, optimizers::RMSpropOptions().clipnorm(0.5).momentum(0.5).centered(true)));
  });
  // One group for everything.
  expect_grouped_equals_separate("sgd nesterov clipvalue", [] {
    return std::unique_ptr<optimizers::Optimizer>(std::make_unique<optimizers::SGD>(
        0.1, optimizers::SGDOptions().momentum(0.9).nesterov(true).clipvalue(0.4)));
  });
}

TEST(OptimizerUpdateMany, ApplyGradientsWithARepeatedVariableUpdatesItInOrder) {
  // The same variable three times in one call: three momentum updates in list order, as three
  // calls give (SGD's rule does not depend on the step count). With clipnorm each gradient has
  // its own scale; g1 and g3 share theirs (equal norms), so grouping by hyper-parameters alone
  // would run g3 before g2, and momentum makes the order visible.
  auto make = [] { return optimizers::SGD(0.1, optimizers::SGDOptions().momentum(0.9).clipnorm(0.1)); };
  const VariablePtr w = testing::make_var("w", {1.0f, -2.0f});
  const VariablePtr w2 = testing::make_var("w2", {1.0f, -2.0f});
  optimizers::SGD once = make(), thrice = make();
  const Tensor g1 = tensor({0.5f, 0.25f}), g2 = tensor({-1.0f, 2.0f}), g3 = tensor({-0.5f, -0.25f});
  once.apply_gradients({g1, g2, g3}, {w, w, w});
  for (const Tensor& g : {g1, g2, g3}) thrice.apply_gradients({g}, {w2});
  expect_identical(w->value(), w2->value(), "w");
  expect_identical(once.get_slot(w, "momentum")->value(), thrice.get_slot(w2, "momentum")->value(),
                   "momentum");
}

}  // namespace
}  // namespace strata
