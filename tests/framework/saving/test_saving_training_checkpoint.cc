// The internal checkpoint BackupAndRestore writes (framework/saving/training_checkpoint.h): any
// model, subclassed ones included, with its optimizer state and the trainer's JSON state.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "framework/saving/training_checkpoint.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

namespace h5 = testing::h5;
using testing::expect_error;

class TwoDense : public Model {
 public:
  TwoDense() : Model("two_dense") {
    a_ = track(std::make_shared<Dense>(4, "relu"));
    b_ = track(std::make_shared<Dense>(2));
  }

 protected:
  Tensor call(const Tensor& x, bool training) override { return (*b_)((*a_)(x, training), training); }

 private:
  std::shared_ptr<Dense> a_, b_;
};

std::shared_ptr<TwoDense> compiled_model() {
  auto m = std::make_shared<TwoDense>();
  m->compile("adam", "mse");
  m->train_on_batch(random_normal({8, 3}), random_normal({8, 2}));  // builds it and the slots
  return m;
}

void expect_same(const std::vector<VariablePtr>& a, const std::vector<VariablePtr>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]->read_value().to_vector<double>(), b[i]->read_value().to_vector<double>())
        << a[i]->name();
  }
}

TEST(SavingTrainingCheckpoint, SubclassedModelRoundTrip) {
  set_random_seed(31);
  auto saved = compiled_model();
  saved->train_on_batch(random_normal({8, 3}), random_normal({8, 2}));
  const std::string path = (h5::temp_dir("ckpt") / "backup.h5").string();
  const std::string state = R"({"epoch": 3, "step": 0})";
  saving::write_training_checkpoint(*saved, path, state);

  {
    h5::Id f(h5::open_file(path));
    EXPECT_EQ(h5::read_strings(f, "training_state"), std::vector<std::string>{state});
    EXPECT_LE(H5Aexists(f, "model_config"), 0);  // no architecture
    EXPECT_TRUE(h5::is_group(f, "model_weights"));
    EXPECT_TRUE(h5::is_group(f, "optimizer_weights"));
    h5::Id mw(H5Gopen2(f, "model_weights", H5P_DEFAULT));
    EXPECT_EQ(h5::read_strings(mw, "layer_names").size(), 2u);
  }

  auto restored = compiled_model();  // another instance: other layer names, other values
  EXPECT_EQ(saving::read_training_checkpoint(*restored, path), state);
  expect_same(saved->weights(), restored->weights());
  expect_same(saved->optimizer()->variables(), restored->optimizer()->variables());
  EXPECT_EQ(restored->optimizer()->iteration_count(), 2);
}

TEST(SavingTrainingCheckpoint, Errors) {
  const auto dir = h5::temp_dir("ckpt_err");
  auto model = compiled_model();
  const std::string weights = (dir / "w.h5").string();
  model->save_weights(weights);
  expect_error<ValueError>([&] { saving::read_training_checkpoint(*model, weights); },
                           {weights, "training_state"});
  // Another optimizer's state (RMSprop has one slot per variable, Adam two) is an error here,
  // not a warning: resuming with the wrong state would silently change the training.
  const std::string path = (dir / "backup.h5").string();
  saving::write_training_checkpoint(*model, path, "{}");
  auto other = std::make_shared<TwoDense>();
  other->compile("rmsprop", "mse");
  other->train_on_batch(random_normal({8, 3}), random_normal({8, 2}));
  expect_error<ValueError>([&] { saving::read_training_checkpoint(*other, path); },
                           {path, "optimizer"});
}

}  // namespace
}  // namespace strata
