// Helpers shared by the save/load round-trip tests of both formats (.h5 and .keras): exact
// weight comparisons, random weights, and "training continued after load_model() ends exactly
// where training that never stopped does".
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "layers/load_model.h"

namespace strata::testing::round_trip {

inline void expect_same(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>()) << what;
}

// Same values in the same order; `same_names` when b was rebuilt from a's config (load_model).
inline void expect_same_weights(const Model& a, const Model& b, bool same_names) {
  const auto wa = a.weights(), wb = b.weights();
  ASSERT_EQ(wa.size(), wb.size());
  for (size_t i = 0; i < wa.size(); ++i) {
    if (same_names) EXPECT_EQ(wa[i]->name(), wb[i]->name());
    expect_same(wa[i]->read_value(), wb[i]->read_value(), wa[i]->name());
  }
}

// Random values (positive, so variances stay valid) in every float weight; integer ones (a
// Normalization's count) get 7.
inline void randomize(const Model& model) {
  for (const VariablePtr& v : model.weights()) {
    if (is_floating(v->dtype())) {
      v->assign(random_uniform(v->shape(), 0.5, 1.5, v->dtype()));
    } else {
      v->assign(full(v->shape(), 7, v->dtype()));
    }
  }
}

struct OptimizerCase {
  std::string name;  // the optimizer's class_name()
  std::function<std::shared_ptr<optimizers::Optimizer>()> make;
};

inline std::shared_ptr<Sequential> mlp() {
  auto m = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(8, "relu"), std::make_shared<Dense>(2)});
  m->build({-1, 3});
  return m;
}

// Two epochs, save(path), load_model(path), one more epoch: the weights, the optimizer's slots,
// step counter and config all survive the file, with nothing printed, and the result equals
// three uninterrupted epochs bit for bit.
inline void expect_training_continues_exactly(const OptimizerCase& c, const std::string& path) {
  set_random_seed(6);
  const Tensor x = random_normal({64, 3});
  const Tensor y = random_normal({64, 2});
  const FitOptions epoch = FitOptions().batch_size(16).shuffle(false).verbose(0);
  auto straight = mlp();
  auto interrupted = mlp();
  interrupted->set_weights(straight->get_weights());
  straight->compile(c.make(), "mse");
  interrupted->compile(c.make(), "mse");

  straight->fit(x, y, FitOptions(epoch).epochs(3));
  interrupted->fit(x, y, FitOptions(epoch).epochs(2));
  interrupted->save(path);

  ::testing::internal::CaptureStderr();
  std::shared_ptr<Model> resumed = load_model(path);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(err.empty()) << err;
  ASSERT_TRUE(resumed->compiled());
  EXPECT_EQ(resumed->optimizer()->class_name(), c.name);
  EXPECT_EQ(resumed->optimizer()->get_config(), interrupted->optimizer()->get_config());
  EXPECT_EQ(resumed->optimizer()->iteration_count(), 8);
  const auto saved_vars = interrupted->optimizer()->variables();
  const auto loaded_vars = resumed->optimizer()->variables();
  ASSERT_EQ(saved_vars.size(), loaded_vars.size());
  for (size_t i = 0; i < saved_vars.size(); ++i) {
    expect_same(loaded_vars[i]->read_value(), saved_vars[i]->read_value(), saved_vars[i]->name());
  }
  resumed->fit(x, y, FitOptions(epoch).epochs(1));
  EXPECT_EQ(resumed->optimizer()->iteration_count(), 12);
  expect_same_weights(*straight, *resumed, /*same_names=*/false);
}

}  // namespace strata::testing::round_trip
