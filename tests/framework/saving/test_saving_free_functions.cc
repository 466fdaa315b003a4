// The free functions of framework/saving/save_model.h (save_model, save_weights, load_weights)
// and Model's members of the same names are one code path: a file written through either form
// loads through the other, and their errors are the same.
#include <gtest/gtest.h>

#include <string>

#include <strata/strata.h>

#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"
#include "tests/framework/saving/round_trip_test_util.h"

namespace strata {
namespace {

namespace h5 = testing::h5;
using testing::expect_error;
using testing::round_trip::expect_same_weights;
using testing::round_trip::mlp;
using testing::round_trip::randomize;

// The same exception type and message through either form.
template <typename E, typename F, typename G>
void expect_same_error(F&& free_form, G&& member_form) {
  std::string free_what, member_what;
  try {
    free_form();
    ADD_FAILURE() << "the free function did not throw";
  } catch (const E& e) {
    free_what = e.what();
  }
  try {
    member_form();
    ADD_FAILURE() << "the member did not throw";
  } catch (const E& e) {
    member_what = e.what();
  }
  EXPECT_FALSE(free_what.empty());
  EXPECT_EQ(free_what, member_what);
}

// Both weights layouts (Keras 2's .h5, Keras 3's .weights.h5), each way round.
TEST(SavingFreeFunctions, SaveWeightsAndLoadWeightsInEitherForm) {
  const auto dir = h5::temp_dir("free_functions_weights");
  for (const std::string name : {"w.h5", "w.weights.h5"}) {
    SCOPED_TRACE(name);
    const std::string path = (dir / name).string();
    auto saved = mlp();
    randomize(*saved);

    save_weights(*saved, path);
    auto loaded = mlp();
    loaded->load_weights(path);
    expect_same_weights(*saved, *loaded, /*same_names=*/false);

    randomize(*saved);
    saved->save_weights(path);
    auto loaded_free = mlp();
    load_weights(*loaded_free, path);
    expect_same_weights(*saved, *loaded_free, /*same_names=*/false);
  }
}

// by_name and skip_mismatch reach the free function as they reach the member.
TEST(SavingFreeFunctions, LoadWeightsPassesByNameAndSkipMismatch) {
  const std::string path = (h5::temp_dir("free_functions_options") / "w.weights.h5").string();
  auto saved = mlp();
  randomize(*saved);
  save_weights(*saved, path);
  auto wide = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(9, "relu"), std::make_shared<Dense>(2)});
  wide->build({-1, 3});
  expect_same_error<ShapeError>([&] { load_weights(*wide, path); },
                                [&] { wide->load_weights(path); });
  // A Keras 3 file is matched by position: by_name=true is refused.
  expect_same_error<ValueError>([&] { load_weights(*wide, path, /*by_name=*/true); },
                                [&] { wide->load_weights(path, /*by_name=*/true); });
  ::testing::internal::CaptureStderr();
  load_weights(*wide, path, /*by_name=*/false, /*skip_mismatch=*/true);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("Skipping"), std::string::npos) << err;
  // The last layer's bias ([2]) matches and is loaded.
  EXPECT_EQ(wide->weights().back()->read_value().to_vector<float>(),
            saved->weights().back()->read_value().to_vector<float>());
}

// A whole model written by save_model() loads through load_model() and the load_weights member;
// one written by the save() member loads through the load_weights free function.
TEST(SavingFreeFunctions, SaveModelAndSaveInEitherForm) {
  const auto dir = h5::temp_dir("free_functions_model");
  for (const std::string name : {"m.h5", "m.keras"}) {
    SCOPED_TRACE(name);
    const std::string path = (dir / name).string();
    auto saved = mlp();
    randomize(*saved);

    save_model(*saved, path);
    expect_same_weights(*saved, *load_model(path, /*compile=*/false), /*same_names=*/true);
    auto loaded = mlp();
    loaded->load_weights(path);
    expect_same_weights(*saved, *loaded, /*same_names=*/false);

    randomize(*saved);
    saved->save(path);
    auto loaded_free = mlp();
    load_weights(*loaded_free, path);
    expect_same_weights(*saved, *loaded_free, /*same_names=*/false);
  }
}

TEST(SavingFreeFunctions, ErrorsAreTheSameThroughBothForms) {
  const auto dir = h5::temp_dir("free_functions_errors");
  const std::string missing = (dir / "nope.h5").string();
  auto model = mlp();
  expect_error<IOError>([&] { load_weights(*model, missing); }, {missing, "No such file"});
  expect_same_error<IOError>([&] { load_weights(*model, missing); },
                             [&] { model->load_weights(missing); });

  const std::string keras = (dir / "w.keras").string();
  expect_same_error<ValueError>([&] { save_weights(*model, keras); },
                                [&] { model->save_weights(keras); });

  // A subclassed model's architecture cannot be stored, whichever form is asked.
  class Subclassed : public Model {
   public:
    Subclassed() : Model("sub") { d_ = track(std::make_shared<Dense>(2)); }

   protected:
    Tensor call(const Tensor& x, bool training) override { return (*d_)(x, training); }

   private:
    std::shared_ptr<Dense> d_;
  };
  Subclassed subclassed;
  subclassed(random_normal({1, 3}));
  const std::string h5_path = (dir / "m.h5").string();
  expect_same_error<ValueError>([&] { save_model(subclassed, h5_path); },
                                [&] { subclassed.save(h5_path); });
  expect_error<ValueError>([&] { save_model(subclassed, h5_path); }, {"subclassed model"});
}

}  // namespace
}  // namespace strata
