// Every empty input to fit / evaluate / predict is an error naming it, as Keras' "Unexpected
// result of `train_function` (Empty logs)": never an empty map, a loss of 0 or a silent success.
#include <gtest/gtest.h>

#include <strata/strata.h>

namespace strata {
namespace {

std::shared_ptr<Sequential> tiny_model() {
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(2)});
  model->build({-1, 3});
  model->compile("sgd", "sparse_categorical_crossentropy");
  return model;
}

data::Dataset empty_dataset() {
  return data::Dataset::from_tensor_slices({zeros({0, 3}), zeros({0}, DType::kInt64)}).batch(4);
}

data::Dataset some_data() {
  return data::Dataset::from_tensor_slices({ones({8, 3}), zeros({8}, DType::kInt64)}).batch(4);
}

void expect_names_empty_input(const std::function<void()>& fn, const std::string& who) {
  try {
    fn();
    FAIL() << who << " accepted an empty input";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(who), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no batches"), std::string::npos) << e.what();
  }
}

TEST(EmptyInputs, EvaluateOnAnEmptyDatasetIsAnError) {
  auto model = tiny_model();
  expect_names_empty_input([&] { model->evaluate(empty_dataset()); }, "Model.evaluate");
}

TEST(EmptyInputs, FitOnAnEmptyDatasetIsAnError) {
  auto model = tiny_model();
  expect_names_empty_input([&] { model->fit(empty_dataset(), FitOptions().verbose(0)); },
                           "Model.fit");
}

TEST(EmptyInputs, ValidationOnAnEmptyDatasetIsAnErrorNotALossOfZero) {
  auto model = tiny_model();
  expect_names_empty_input(
      [&] { model->fit(some_data(), FitOptions().verbose(0).validation_data(empty_dataset())); },
      "Model.fit");
}

TEST(EmptyInputs, PredictOnAnEmptyDatasetIsAnError) {
  auto model = tiny_model();
  expect_names_empty_input([&] { model->predict(empty_dataset()); }, "Model.predict");
}

}  // namespace
}  // namespace strata
